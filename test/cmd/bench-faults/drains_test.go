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
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evictionrequest/apiserver/internal/faults/history"
)

// fakeKubectl writes, in dir, a kubectl that fails its first run with out
// and succeeds afterwards, counting its runs in dir/runs.
func fakeKubectl(t *testing.T, dir, out string) {
	t.Helper()
	script := "#!/bin/sh\necho run >> " + filepath.Join(dir, "runs") + "\n" +
		"[ $(wc -l < " + filepath.Join(dir, "runs") + ") -gt 1 ] && exit 0\n" +
		"echo '" + out + "' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(dir, "kubectl"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// kubectl drain, given up at a restart of kube-apiserver, is run again and
// the attempt recorded; given up on anything else, the drain ends there.
func TestACommandDrainIsRunAgainOnlyAfterKubeAPIServerWasUnreachable(t *testing.T) {
	const server = "https://127.0.0.1:40043"
	for _, tc := range []struct {
		name, out string
		runs      int
		drained   bool
	}{
		{"unreachable", `error when evicting pods/"db-0" -n "faults": Post "` + server + `/api/v1/namespaces/faults/pods/db-0/eviction": dial tcp 127.0.0.1:40043: connect: connection refused`, 2, true},
		{"answered", `error when evicting pods/"db-0" -n "faults": pods "db-0" is forbidden`, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			fakeKubectl(t, dir, tc.out)
			record, err := history.Create(filepath.Join(dir, "record.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			d := &drainer{record: record, apiServer: server, binDir: dir, kubeconfig: "unused", timeout: time.Minute}
			d.run(t.Context(), history.DrainKubectl, []string{"kwok-node-3"})
			d.wg.Wait()
			if err := record.Close(); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(filepath.Join(dir, "runs"))
			if err != nil {
				t.Fatal(err)
			}
			if runs := strings.Count(string(data), "run"); runs != tc.runs {
				t.Errorf("kubectl ran %d times, want %d", runs, tc.runs)
			}
			f, err := os.Open(filepath.Join(dir, "record.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			entries, err := history.Read(f)
			if err != nil {
				t.Fatal(err)
			}
			var phases []string
			var outcome string
			for _, e := range entries {
				if e.Drain != nil {
					phases = append(phases, e.Drain.Phase)
					outcome = e.Drain.Outcome
				}
			}
			wantPhases := []string{history.PhaseStart, history.PhaseEnd}
			if tc.runs == 2 {
				wantPhases = []string{history.PhaseStart, history.PhaseRetry, history.PhaseEnd}
			}
			if strings.Join(phases, ",") != strings.Join(wantPhases, ",") || (outcome == history.OutcomeDrained) != tc.drained {
				t.Errorf("recorded %v ending %q, want %v, drained %v", phases, outcome, wantPhases, tc.drained)
			}
		})
	}
}
