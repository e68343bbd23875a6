/*
Copyright The EvictionRequest API Server Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package leaderelect

import (
	"context"
	"fmt"
	"net/http"
)

// fenceKey is the context key of a term's fence.
type fenceKey struct{}

// withFence returns ctx carrying check, which says whether the term may
// still act.
func withFence(ctx context.Context, check func() error) context.Context {
	return context.WithValue(ctx, fenceKey{}, check)
}

// Fence is nil unless ctx belongs to a leadership term whose Lease has or
// may have passed to another replica: the elector read another holder in
// it, or, by this process's own clock, its last renewal is older than the
// renew deadline, past which a running elector would already have
// stopped leading. Only a process that did not run for that long gets
// there: frozen (SIGSTOP, a paused VM, a stalled node) past its Lease, it
// resumes with every goroutine of its term still running, and would act
// for the seconds until its renew deadline passes while another replica
// leads. Fence tells them before they write.
func Fence(ctx context.Context) error {
	check, ok := ctx.Value(fenceKey{}).(func() error)
	if !ok {
		return nil
	}
	return check()
}

// FenceWrites wraps a client's transport so that a request that writes
// (any method but GET, HEAD and OPTIONS) fails before it is sent when its
// context's term is fenced (Fence); reads, and requests of no term, go
// through. Every client a term writes with should have it: the term's
// controllers then retry, and stop when the term ends.
func FenceWrites(rt http.RoundTripper) http.RoundTripper {
	return fencedTransport{rt}
}

// fencedTransport is FenceWrites' transport.
type fencedTransport struct {
	http.RoundTripper
}

// RoundTrip sends req unless it writes for a fenced term.
func (t fencedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
	default:
		if err := Fence(req.Context()); err != nil {
			return nil, fmt.Errorf("not sent: %w", err)
		}
	}
	return t.RoundTripper.RoundTrip(req)
}

// WrappedRoundTripper is the transport FenceWrites wraps, as client-go's
// own wrappers expose theirs.
func (t fencedTransport) WrappedRoundTripper() http.RoundTripper {
	return t.RoundTripper
}
