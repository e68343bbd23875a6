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

// Package scripts tests the shell scripts of make test's phases:
// hack/timed.sh records a phase, hack/phases.sh prints them.
package scripts

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// timed runs hack/timed.sh with PHASES=phases and returns its exit code.
func timed(t *testing.T, phases string, env []string, phase string, command ...string) int {
	t.Helper()
	cmd := exec.Command(script(t, "timed.sh"), append([]string{phase}, command...)...)
	cmd.Env = append(append(environ(), "PHASES="+phases), env...)
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return 0
}

// environ is the test's environment without the phase it runs within: make
// test runs it within one (PHASES_PARENT), which its phases are not.
func environ() []string {
	return slices.DeleteFunc(os.Environ(), func(v string) bool { return strings.HasPrefix(v, "PHASES_PARENT=") || strings.HasPrefix(v, "PHASES=") })
}

// script is the path of hack/NAME.
func script(t *testing.T, name string) string {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("..", "..", "hack", name))
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// record is a phase as hack/timed.sh records it.
type record struct {
	name, parent, log string
	status            int
	cpu               float64
}

// records reads the phases file.
func records(t *testing.T, phases string) []record {
	t.Helper()
	data, err := os.ReadFile(phases)
	if err != nil {
		t.Fatal(err)
	}
	var out []record
	for line := range strings.Lines(string(data)) {
		f := strings.Split(strings.TrimSuffix(line, "\n"), "\t")
		if len(f) != 6 {
			t.Fatalf("record %q: %d fields, want 6 (name, seconds, status, parent, CPU seconds, log)", line, len(f))
		}
		status, err := strconv.Atoi(f[2])
		if err != nil {
			t.Fatal(err)
		}
		cpu, err := strconv.ParseFloat(f[4], 64)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, record{name: f[0], status: status, parent: f[3], cpu: cpu, log: f[5]})
	}
	return out
}

func TestTimedRecordsAPhaseWithItsStatusAndItsOutput(t *testing.T) {
	phases := filepath.Join(t.TempDir(), "phases.tsv")
	if code := timed(t, phases, nil, "a phase", "sh", "-c", "echo to stdout; echo to stderr >&2; exit 3"); code != 3 {
		t.Errorf("timed.sh exited %d, want the command's 3", code)
	}
	got := records(t, phases)
	if len(got) != 1 || got[0].name != "a phase" || got[0].status != 3 || got[0].parent != "" {
		t.Fatalf("records %+v, want one of phase \"a phase\", status 3, no parent", got)
	}
	log, err := os.ReadFile(got[0].log)
	if err != nil {
		t.Fatal(err)
	}
	if string(log) != "to stdout\nto stderr\n" {
		t.Errorf("the phase's log holds %q, want its stdout and stderr", log)
	}
}

func TestTimedRecordsTheCPUSecondsOfWhatItRan(t *testing.T) {
	phases := filepath.Join(t.TempDir(), "phases.tsv")
	// A child of a child: the CPU of every process the phase waited for.
	busy := `sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done'`
	if code := timed(t, phases, nil, "busy", "sh", "-c", busy); code != 0 {
		t.Fatalf("timed.sh exited %d", code)
	}
	if got := records(t, phases); len(got) != 1 || got[0].cpu <= 0 {
		t.Errorf("records %+v, want the CPU seconds of a busy loop, more than 0", got)
	}
}

func TestTimedRecordsPhasesWithinAPhase(t *testing.T) {
	phases := filepath.Join(t.TempDir(), "phases.tsv")
	inner := script(t, "timed.sh") + ` inner true`
	if code := timed(t, phases, nil, "outer", "sh", "-c", inner); code != 0 {
		t.Fatalf("timed.sh exited %d", code)
	}
	got := records(t, phases)
	if len(got) != 2 || got[0].name != "inner" || got[0].parent != "outer" || got[1].name != "outer" || got[1].parent != "" {
		t.Errorf("records %+v, want inner within outer, then outer", got)
	}
}

// A phase that failed within another gets the last lines of its output
// printed before the table; the phase that ran it, which failed only
// through it, does not.
func TestPhasesPrintsTheLastLinesOfAPhaseThatFailed(t *testing.T) {
	phases := filepath.Join(t.TempDir(), "phases.tsv")
	inner := script(t, "timed.sh") + ` bad sh -c 'echo one; echo two; echo three; exit 1'`
	timed(t, phases, nil, "outer", "sh", "-c", script(t, "timed.sh")+" good true; "+inner)
	cmd := exec.Command(script(t, "phases.sh"), phases)
	cmd.Env = append(environ(), "PHASES_TAIL_LINES=2")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("phases.sh: %v\n%s", err, out)
	}
	text := string(out)
	tail := "the last lines of \"bad\", which failed"
	if !strings.Contains(text, tail+" ("+filepath.Join(filepath.Dir(phases), "phases-logs", "bad.log")+")\ntwo\nthree\n") {
		t.Errorf("phases.sh printed:\n%s\nwant the last two lines of bad's output under %q", text, tail)
	}
	if strings.Contains(text, `"outer"`) || strings.Contains(text, `"good"`) || strings.Contains(text, "one\n") {
		t.Errorf("phases.sh printed:\n%s\nwant only bad's last lines: outer failed through it, good did not fail", text)
	}
	if table := strings.Index(text, ">> make test phases"); table < strings.Index(text, tail) {
		t.Errorf("phases.sh printed:\n%s\nwant the last lines before the table, which ends the output", text)
	}
}
