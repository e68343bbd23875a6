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

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
)

var unsafeInName = regexp.MustCompile(`[^a-z0-9]+`)

// profiler takes CPU profiles of the servers of one phase, so that what a
// write costs can be read from the profile of the very load measured.
type profiler struct {
	wg   sync.WaitGroup
	errs []error
	mu   sync.Mutex
}

// startProfiles starts a CPU profile of o.profileSeconds of every server of
// t (kube-apiserver, and ours for ours), written to o.profileDir as
// <api>-<phase>-<server>.pprof; a later round overwrites an earlier one. It
// returns nil when profiling is off.
func (b *bench) startProfiles(ctx context.Context, t target, phase string) *profiler {
	if b.o.profileDir == "" {
		return nil
	}
	p := &profiler{}
	servers := map[string]*rest.Config{"kube-apiserver": b.admin}
	if t.ours {
		servers["evictionrequest-apiserver"] = b.server()
	}
	for name, config := range servers {
		file := filepath.Join(b.o.profileDir, fmt.Sprintf("%s-%s-%s.pprof", t.name, unsafeInName.ReplaceAllString(phase, "-"), name))
		p.wg.Go(func() {
			if err := profile(ctx, config, b.o.profileSeconds, file); err != nil {
				p.mu.Lock()
				p.errs = append(p.errs, err)
				p.mu.Unlock()
			}
		})
	}
	return p
}

// wait waits for the profiles and returns the first error.
func (p *profiler) wait() error {
	if p == nil {
		return nil
	}
	p.wg.Wait()
	if len(p.errs) > 0 {
		return p.errs[0]
	}
	return nil
}

func profile(ctx context.Context, config *rest.Config, seconds int, file string) error {
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}
	body, err := client.Discovery().RESTClient().Get().AbsPath("/debug/pprof/profile").
		Param("seconds", strconv.Itoa(seconds)).DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("CPU profile of %s: %w", config.Host, err)
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	klog.FromContext(ctx).Info("Wrote a CPU profile", "file", file)
	return os.WriteFile(file, body, 0o644)
}
