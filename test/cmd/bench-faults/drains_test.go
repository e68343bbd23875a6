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

// kubectl drain, given up at a restart of kube-apiserver or when
// kube-apiserver could not call the eviction API bridge, is run again and
// the attempt recorded; given up on anything else, the drain ends there.
func TestACommandDrainIsRunAgainOnlyAfterKubeAPIServerOrTheBridgeWasUnreachable(t *testing.T) {
	const server = "https://127.0.0.1:40043"
	for _, tc := range []struct {
		name, out string
		runs      int
		drained   bool
	}{
		{"unreachable", `error when evicting pods/"db-0" -n "faults": Post "` + server + `/api/v1/namespaces/faults/pods/db-0/eviction": dial tcp 127.0.0.1:40043: connect: connection refused`, 2, true},
		{"a TLS handshake timed out", `Unable to connect to the server: net/http: TLS handshake timeout`, 2, true},
		{"answered", `error when evicting pods/"db-0" -n "faults": pods "db-0" is forbidden`, 1, false},
		{"the bridge unreachable, refused under failurePolicy Fail", `error when evicting pods/"solo-2-74647bc5fd-2mnd9" -n "faults": Internal error occurred: failed calling webhook "eviction-bridge.evictionrequest.coordination.k8s.io": failed to call webhook: Post "https://evictionrequest-apiserver-local.evictionrequest-system.svc:45309/eviction-bridge?timeout=5s": context deadline exceeded`, 2, true},
		{"another webhook unreachable", `error when evicting pods/"db-0" -n "faults": Internal error occurred: failed calling webhook "other.example.com": failed to call webhook: Post "https://other.example.com/validate?timeout=5s": context deadline exceeded`, 1, false},
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

// A command drain is run again only when kube-apiserver itself could not
// be reached; what kube-apiserver answered, a webhook's failure among it,
// ends the drain.
func TestUnreachableIsKubeAPIServerOnly(t *testing.T) {
	const server = "https://127.0.0.1:40043"
	for _, tc := range []struct {
		name, out string
		want      bool
	}{
		{"refused, as kubectl drain printed it in a campaign", `error when evicting pods/"budgeted-5897bcb74-5lqjg" -n "faults": Post "https://127.0.0.1:40043/api/v1/namespaces/faults/pods/budgeted-5897bcb74-5lqjg/eviction": dial tcp 127.0.0.1:40043: connect: connection refused`, true},
		{"reset", `Get "https://127.0.0.1:40043/api/v1/nodes/kwok-node-3": read tcp 127.0.0.1:51234->127.0.0.1:40043: read: connection reset by peer`, true},
		{"cut short", `Get "https://127.0.0.1:40043/api/v1/pods?fieldSelector=spec.nodeName%3Dkwok-node-3": EOF`, true},
		{"cut short in a body", `Get "https://127.0.0.1:40043/api/v1/pods?fieldSelector=spec.nodeName%3Dkwok-node-3": unexpected EOF`, true},
		{"refused before the drain began, in kubectl's words", `The connection to the server 127.0.0.1:40043 was refused - did you specify the right host or port?`, true},
		{"another server refused, in kubectl's words", `The connection to the server 127.0.0.1:40044 was refused - did you specify the right host or port?`, false},
		{"a webhook's failure, answered by kube-apiserver", `error when evicting pods/"db-0" -n "faults": Internal error occurred: failed calling webhook "eviction-bridge.evictionrequest.github.io": Post "https://localhost:40077/evict?timeout=10s": dial tcp 127.0.0.1:40077: connect: connection refused`, false},
		{"another server's address", `Post "https://127.0.0.1:40044/api/v1/namespaces/faults/pods/x/eviction": dial tcp 127.0.0.1:40044: connect: connection refused`, false},
		{"a refusal", `error when evicting pods/"db-0" -n "faults": pods "db-0" is forbidden: User "e2e" cannot create resource "pods/eviction"`, false},
		{"the drain's own time-out", `error: timed out waiting for the condition`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := unreachable(tc.out, server); got != tc.want {
				t.Errorf("unreachable(%q) = %v, want %v", tc.out, got, tc.want)
			}
		})
	}
}
