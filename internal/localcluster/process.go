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
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// stopGracePeriod is how long a component gets to shut down after SIGTERM
// before it is killed.
const stopGracePeriod = 20 * time.Second

// Process is a component of the local control plane running as a child
// process, its output in a log file.
type Process struct {
	Name    string
	LogFile string
	// MetricsURL is the /metrics of a workload of the overlay, empty for
	// the other components.
	MetricsURL string

	cmd    *exec.Cmd
	done   chan struct{}
	err    error
	pidLog *pidLog
}

// startProcess starts bin with args; stdout and stderr go to logDir/<name>.log.
func startProcess(name, logDir string, pids *pidLog, env []string, bin string, args ...string) (*Process, error) {
	logFile := filepath.Join(logDir, name+".log")
	out, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "\n=== %s %s %s\n", time.Now().Format(time.RFC3339), bin, strings.Join(args, " "))
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = append(os.Environ(), env...)
	// A process group of its own lets Stop reach whatever the component
	// forks; the parent-death signal takes the component down with a
	// harness that is killed before it can clean up.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		out.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &Process{Name: name, LogFile: logFile, cmd: cmd, done: make(chan struct{}), pidLog: pids}
	pids.add(cmd.Process.Pid)
	go func() {
		p.err = cmd.Wait()
		out.Close()
		pids.remove(cmd.Process.Pid)
		close(p.done)
	}()
	return p, nil
}

// Pid is the process id, also the id of its process group.
func (p *Process) Pid() int {
	return p.cmd.Process.Pid
}

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} {
	return p.done
}

// Err returns how the process exited, once Done is closed.
func (p *Process) Err() error {
	return p.err
}

// Stop sends SIGTERM to the process group and waits for the process to exit,
// killing it after stopGracePeriod.
func (p *Process) Stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(stopGracePeriod):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// Freeze stops the process group (SIGSTOP), as a hung machine would: its
// connections stay open and nothing answers.
func (p *Process) Freeze() error {
	return syscall.Kill(-p.cmd.Process.Pid, syscall.SIGSTOP)
}

// Thaw resumes a frozen process group (SIGCONT).
func (p *Process) Thaw() error {
	return syscall.Kill(-p.cmd.Process.Pid, syscall.SIGCONT)
}

// Kill ends the process group at once, as a crash would.
func (p *Process) Kill() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
}

// pidLog records the process groups a harness started in a file of its
// directory, so that the next harness on the same directory can end what a
// crashed one left behind.
type pidLog struct {
	mu   sync.Mutex
	path string
	pids map[int]bool
}

func newPIDLog(path string) *pidLog {
	return &pidLog{path: path, pids: map[int]bool{}}
}

func (l *pidLog) add(pid int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pids[pid] = true
	l.write()
}

func (l *pidLog) remove(pid int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.pids, pid)
	l.write()
}

func (l *pidLog) write() {
	var b strings.Builder
	for pid := range l.pids {
		fmt.Fprintln(&b, pid)
	}
	_ = os.WriteFile(l.path, []byte(b.String()), 0o644)
}

// killLeftovers kills the process groups listed in the pid file at path
// whose command line still mentions dir, the directory of their cluster: a
// pid reused by an unrelated process is left alone.
func killLeftovers(path, dir string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		pid, err := strconv.Atoi(strings.TrimSpace(scanner.Text()))
		if err != nil || pid <= 1 {
			continue
		}
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || !strings.Contains(string(cmdline), dir) {
			continue
		}
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		for i := 0; i < 100 && syscall.Kill(pid, 0) == nil; i++ {
			time.Sleep(50 * time.Millisecond)
		}
	}
	return scanner.Err()
}
