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
	"path/filepath"
	"regexp"

	"github.com/evictionrequest/apiserver/internal/benchutil"
)

var unsafeInName = regexp.MustCompile(`[^a-z0-9]+`)

// startProfiles starts a CPU profile of o.profileSeconds of every holder of
// t, written to o.profileDir as <api>-<phase>-<holder>.pprof; a later round
// overwrites an earlier one. It returns nil when profiling is off.
func (b *bench) startProfiles(ctx context.Context, t target, phase string) *benchutil.CPUProfiles {
	if b.o.profileDir == "" {
		return nil
	}
	return benchutil.StartCPUProfiles(ctx, b.holders(t), b.o.profileSeconds, func(h benchutil.PprofSource) string {
		return filepath.Join(b.o.profileDir, fmt.Sprintf("%s-%s-%s.pprof", t.name, unsafeInName.ReplaceAllString(phase, "-"), h.Name))
	})
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
		file := filepath.Join(b.o.profileDir, fmt.Sprintf("%s-heap-%s-%s.pprof", t.name, when, h.Name))
		if err := benchutil.SaveProfile(ctx, h, "heap", map[string]string{"gc": "1"}, file); err != nil {
			return err
		}
	}
	return nil
}
