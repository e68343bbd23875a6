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

package framework

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Command is a binary of the bin dir that a test runs, with its output
// captured and copied to a log file of the cluster's log directory.
type Command struct {
	Name   string
	cmd    *exec.Cmd
	stdout syncBuffer
	stderr syncBuffer
	done   chan struct{}
	err    error
}

// StartCommand starts bin of the bin dir with args and the cluster's admin
// kubeconfig; the test's cleanup kills it if it still runs.
func (f *Framework) StartCommand(t testing.TB, bin string, args ...string) *Command {
	t.Helper()
	logName := strings.NewReplacer("/", "-", " ", "-").Replace(t.Name()) + "-" + bin + ".log"
	log, err := os.OpenFile(filepath.Join(f.LogDir(), logName), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(log, "\n=== %s %s %s\n", time.Now().Format(time.RFC3339), bin, strings.Join(args, " "))
	c := &Command{Name: bin, cmd: exec.Command(filepath.Join(*binDir, bin), args...), done: make(chan struct{})}
	c.cmd.Env = append(os.Environ(), "KUBECONFIG="+f.KubeconfigPath)
	c.cmd.Stdout = io.MultiWriter(&c.stdout, log)
	c.cmd.Stderr = io.MultiWriter(&c.stderr, log)
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := c.cmd.Start(); err != nil {
		log.Close()
		t.Fatalf("starting %s: %v", bin, err)
	}
	go func() {
		c.err = c.cmd.Wait()
		log.Close()
		close(c.done)
	}()
	t.Cleanup(c.Kill)
	return c
}

// RunCommand runs bin to its end, at most timeout, and returns its output.
func (f *Framework) RunCommand(t testing.TB, timeout time.Duration, bin string, args ...string) KubectlResult {
	t.Helper()
	c := f.StartCommand(t, bin, args...)
	err := c.Wait(timeout)
	return KubectlResult{Stdout: c.Stdout(), Stderr: c.Stderr(), Err: err}
}

// Wait waits at most timeout for the command to exit and returns how it
// exited; on time-out it kills it.
func (c *Command) Wait(timeout time.Duration) error {
	select {
	case <-c.done:
		return c.err
	case <-time.After(timeout):
		c.Kill()
		return fmt.Errorf("%s did not exit within %s", c.Name, timeout)
	}
}

// Signal sends sig to the command.
func (c *Command) Signal(sig os.Signal) error {
	return c.cmd.Process.Signal(sig)
}

// Kill ends the command at once, as a crash would, and waits for it.
func (c *Command) Kill() {
	select {
	case <-c.done:
		return
	default:
	}
	_ = c.cmd.Process.Kill()
	<-c.done
}

// ExitCode is the command's exit code once it exited, -1 before.
func (c *Command) ExitCode() int {
	select {
	case <-c.done:
		return c.cmd.ProcessState.ExitCode()
	default:
		return -1
	}
}

// Stdout is what the command printed on stdout so far.
func (c *Command) Stdout() string { return c.stdout.String() }

// Stderr is what the command printed on stderr so far.
func (c *Command) Stderr() string { return c.stderr.String() }

// syncBuffer is a bytes.Buffer safe for a writer and concurrent readers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
