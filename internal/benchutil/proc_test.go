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

package benchutil

import (
	"os"
	"syscall"
	"testing"
	"time"
)

func TestProcReadersReadThisProcess(t *testing.T) {
	pid := os.Getpid()
	rss, err := ProcStatusKiB(pid, "VmRSS")
	if err != nil || rss <= 0 {
		t.Errorf("ProcStatusKiB(VmRSS) = %v, %v; want a positive size", rss, err)
	}
	if _, err := ProcStatusKiB(pid, "NoSuchField"); err == nil {
		t.Error("ProcStatusKiB of a field /proc/<pid>/status lacks: no error")
	}

	start, err := ProcessStart(pid)
	if err != nil {
		t.Fatalf("ProcessStart: %v", err)
	}
	// The test binary started before this test, and not long before.
	if now := time.Now(); start.After(now) || start.Before(now.Add(-10*time.Minute)) {
		t.Errorf("ProcessStart = %v; want shortly before %v", start, now)
	}

	// Burn a third of a second of user CPU, then compare with what the
	// kernel says through getrusage(2), read just before and after: the
	// clock ticks of /proc/<pid>/stat are hundredths of a second.
	for start := time.Now(); time.Since(start) < time.Second/3; {
		x := 0
		for i := range 1_000_000 {
			x ^= i
		}
		_ = x
	}
	low := rusageSeconds(t)
	seconds, err := CPUSeconds(pid)
	if err != nil {
		t.Fatalf("CPUSeconds: %v", err)
	}
	high := rusageSeconds(t)
	if seconds < low-0.05 || seconds > high+0.05 {
		t.Errorf("CPUSeconds = %.2f; getrusage said %.2f to %.2f", seconds, low, high)
	}
}

func TestProcReadersRefuseAProcessThatIsGone(t *testing.T) {
	// Linux's pid_max is at most 2^22: this pid is never in use.
	const gone = 1 << 23
	if _, err := CPUSeconds(gone); err == nil {
		t.Error("CPUSeconds of a process that does not exist: no error")
	}
	if _, err := ProcessStart(gone); err == nil {
		t.Error("ProcessStart of a process that does not exist: no error")
	}
	if _, err := ProcStatusKiB(gone, "VmRSS"); err == nil {
		t.Error("ProcStatusKiB of a process that does not exist: no error")
	}
}

// rusageSeconds is the user and system CPU this process used so far, by
// getrusage(2).
func rusageSeconds(t *testing.T) float64 {
	t.Helper()
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		t.Fatal(err)
	}
	return time.Duration(usage.Utime.Nano() + usage.Stime.Nano()).Seconds()
}

// A command name may hold ") " (a binary named so): the fields are those
// after the last ')', as proc(5) says, not after the first.
func TestParseStatReadsPastACommandNameWithParentheses(t *testing.T) {
	const stat = "4242 (x) 1 2 (y) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 1 0 98765 1000 100"
	fields, ok := parseStat(stat)
	if !ok {
		t.Fatalf("parseStat(%q) refused it", stat)
	}
	for n, want := range map[int]string{3: "S", 14: "250", 15: "75", 22: "98765"} {
		if got := fields[statField(n)]; got != want {
			t.Errorf("field %d = %q, want %q", n, got, want)
		}
	}
	if _, ok := parseStat("4242 (truncated"); ok {
		t.Error("parseStat of a line without the name's ')': accepted")
	}
}

// What a process used between two samples is by pid: a process restarted
// in between counts from its start, never less the time of the one it
// replaced; one that ran throughout counts its difference.
func TestCPUSampleSubtractsOnlyTheSameProcess(t *testing.T) {
	before := CPUSample{
		100: {Name: "kube-apiserver", Seconds: 40},
		200: {Name: "evictionrequest-apiserver", Seconds: 30},
	}
	after := CPUSample{
		100: {Name: "kube-apiserver", Seconds: 52.5},
		// evictionrequest-apiserver restarted as pid 300.
		300: {Name: "evictionrequest-apiserver", Seconds: 4},
	}
	got := before.usedBy(after)
	want := map[string]float64{"kube-apiserver": 12.5, "evictionrequest-apiserver": 4}
	if len(got) != len(want) {
		t.Fatalf("used %v, want %v", got, want)
	}
	for name, seconds := range want {
		if got[name] != seconds {
			t.Errorf("%s used %v, want %v", name, got[name], seconds)
		}
	}
}
