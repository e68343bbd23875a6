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

	"k8s.io/klog/v2"
)

var unsafeInName = regexp.MustCompile(`[^a-z0-9]+`)

// profiler takes the CPU profiles of the servers of one phase, so that what a
// write costs can be read from the profile of the very load measured.
type profiler struct {
	wg   sync.WaitGroup
	errs []error
	mu   sync.Mutex
}

// startProfiles starts a CPU profile of o.profileSeconds of every holder of
// t, written to o.profileDir as <api>-<phase>-<holder>.pprof; a later round
// overwrites an earlier one. It returns nil when profiling is off.
func (b *bench) startProfiles(ctx context.Context, t target, phase string) *profiler {
	if b.o.profileDir == "" {
		return nil
	}
	p := &profiler{}
	for _, h := range b.holders(t) {
		file := filepath.Join(b.o.profileDir, fmt.Sprintf("%s-%s-%s.pprof", t.name, unsafeInName.ReplaceAllString(phase, "-"), h.name))
		p.wg.Go(func() {
			if err := saveProfile(ctx, h, "profile", map[string]string{"seconds": strconv.Itoa(b.o.profileSeconds)}, file); err != nil {
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

// saveHeapProfiles writes the live heap of every holder of t, after a
// garbage collection, to o.profileDir as <api>-heap-<when>-<holder>.pprof,
// when profiling is on. The growth between two of them is what the objects
// created in between hold: go tool pprof -diff_base=<earlier> <later>.
func (b *bench) saveHeapProfiles(ctx context.Context, t target, when string) error {
	if b.o.profileDir == "" {
		return nil
	}
	for _, h := range b.holders(t) {
		file := filepath.Join(b.o.profileDir, fmt.Sprintf("%s-heap-%s-%s.pprof", t.name, when, h.name))
		if err := saveProfile(ctx, h, "heap", map[string]string{"gc": "1"}, file); err != nil {
			return err
		}
	}
	return nil
}

// saveProfile saves the pprof profile kind of h to file.
func saveProfile(ctx context.Context, h holder, kind string, params map[string]string, file string) error {
	body, err := h.pprof(ctx, kind, params)
	if err != nil {
		return fmt.Errorf("%s profile of %s: %w", kind, h.name, err)
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	klog.FromContext(ctx).Info("Wrote a profile", "file", file)
	return os.WriteFile(file, body, 0o644)
}
