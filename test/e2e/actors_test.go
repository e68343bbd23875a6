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

package e2e

import (
	"context"
	"testing"

	"github.com/evictionrequest/apiserver/pkg/sdk/interceptor"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
)

// newRequester is an SDK requester of the suite, as the cluster admin. Its
// requests outlive their pods (requester.Options.KeepAfterPod), so that the
// tests can read how they completed before the garbage collector would
// delete them with the pod; ownedRequester makes them owned by the pod.
func newRequester(t *testing.T, name string) *requester.Requester {
	t.Helper()
	return newRequesterWith(t, name, requester.Options{KeepAfterPod: true})
}

// ownedRequester is a requester whose requests the pod owns, as by default.
func ownedRequester(t *testing.T, name string) *requester.Requester {
	t.Helper()
	return newRequesterWith(t, name, requester.Options{})
}

func newRequesterWith(t *testing.T, name string, opts requester.Options) *requester.Requester {
	t.Helper()
	return f.NewRequester(t, name, opts)
}

// declines is a handler that passes every request on at once.
func declines(context.Context, *interceptor.Request) (interceptor.Result, error) {
	return interceptor.Decline("not mine"), nil
}
