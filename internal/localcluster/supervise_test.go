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

package localcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// componentEnv makes the test binary play a component of the local
// control plane (TestMain): "crash-once" crashes on its first start, as
// kwok once did, and is ready on the next; "crash-always" never starts.
const componentEnv = "LOCALCLUSTER_TEST_COMPONENT"

func TestMain(m *testing.M) {
	if mode := os.Getenv(componentEnv); mode != "" {
		os.Exit(runTestComponent(mode, os.Getenv("LOCALCLUSTER_TEST_DIR")))
	}
	os.Exit(m.Run())
}

// runTestComponent crashes as the Go runtime does on a data race, or
// writes its ready file and runs until SIGTERM.
func runTestComponent(mode, dir string) int {
	crashed := filepath.Join(dir, "crashed")
	if _, err := os.Stat(crashed); mode == "crash-always" || errors.Is(err, os.ErrNotExist) {
		_ = os.WriteFile(crashed, nil, 0o644)
		fmt.Fprintln(os.Stderr, "fatal error: concurrent map writes")
		return 2
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM)
	if err := os.WriteFile(filepath.Join(dir, "ready"), nil, 0o644); err != nil {
		return 1
	}
	<-stop
	return 0
}

// testCluster is a Cluster of no component yet, whose progress the test
// reads, stopped when the test ends.
func testCluster(t *testing.T) (*Cluster, *logs) {
	t.Helper()
	dir := t.TempDir()
	l := &logs{}
	c := &Cluster{cfg: Config{Dir: dir, BinDir: filepath.Dir(os.Args[0]), Logf: l.logf}, logDir: dir,
		pids: newPIDLog(filepath.Join(dir, "pids")), exited: make(chan *Process, 16)}
	t.Cleanup(c.Stop)
	return c, l
}

type logs struct {
	mu    sync.Mutex
	lines []string
}

func (l *logs) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// startTestComponent starts the test binary as a component in mode and
// waits until it is ready, as the harness waits for kwok.
func startTestComponent(t *testing.T, c *Cluster, mode string) (*Process, error) {
	t.Helper()
	dir := t.TempDir()
	p, err := c.run("component", []string{componentEnv + "=" + mode, "LOCALCLUSTER_TEST_DIR=" + dir}, filepath.Base(os.Args[0]))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	return p, c.waitUntilReady(ctx, p, "component", func(context.Context) error {
		_, err := os.Stat(filepath.Join(dir, "ready"))
		return err
	})
}

// A component that crashes while it starts is started again, the crash
// logged with the end of its log, and is not reported as exited; once
// ready, its exit is.
func TestAComponentThatCrashesWhileStartingIsStartedAgain(t *testing.T) {
	c, progress := testCluster(t)
	p, err := startTestComponent(t, c, "crash-once")
	if err != nil {
		t.Fatalf("the component did not start on its second try: %v", err)
	}
	for _, want := range []string{"component exited while starting (start 1 of 3)", "fatal error: concurrent map writes"} {
		if !strings.Contains(progress.String(), want) {
			t.Errorf("the harness's log lacks %q:\n%s", want, progress)
		}
	}
	select {
	case exited := <-c.Exited():
		t.Fatalf("the crash while starting was reported as an exit of %s", exited.Name)
	default:
	}
	p.Stop()
	select {
	case exited := <-c.Exited():
		if exited != p {
			t.Errorf("exit of %s reported, want the component", exited.Name)
		}
	case <-time.After(10 * time.Second):
		t.Error("the exit of the ready component was not reported")
	}
}

// A component that cannot start fails the start after startAttempts tries,
// with the end of its log in the error.
func TestAComponentThatNeverStartsFailsTheStart(t *testing.T) {
	c, _ := testCluster(t)
	p, err := startTestComponent(t, c, "crash-always")
	if !errors.Is(err, errExitedBeforeReady) || !strings.Contains(err.Error(), "concurrent map writes") {
		t.Fatalf("waitUntilReady = %v, want an exit before ready with the end of the log", err)
	}
	log, _ := os.ReadFile(p.LogFile)
	if starts := strings.Count(string(log), "\n=== "); starts != startAttempts {
		t.Errorf("started %d times, want %d", starts, startAttempts)
	}
}
