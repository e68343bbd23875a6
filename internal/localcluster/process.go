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
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
// process, its output in a log file. A process that exits before it is
// ready may be started again (Cluster.waitFor): the same *Process then
// stands for its new incarnation.
type Process struct {
	Name    string
	LogFile string
	// MetricsURL is the /metrics of a workload of the overlay, empty for
	// the other components; MetricsClient reads it, as a caller its
	// authorization lets through (nil: any client may).
	MetricsURL    string
	MetricsClient *http.Client

	// bin, args and env are its command, to start it again.
	bin    string
	args   []string
	env    []string
	pidLog *pidLog
	// onExit is called when an incarnation that was ready exits.
	onExit func(*Process)

	mu sync.Mutex
	// run is the current incarnation.
	run *incarnation
	// ready is set once the component answered its readiness check.
	ready bool
}

// incarnation is one start of a Process.
type incarnation struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// startProcess starts bin with args; stdout and stderr go to logDir/<name>.log.
func startProcess(name, logDir string, pids *pidLog, env []string, bin string, args ...string) (*Process, error) {
	p := &Process{Name: name, LogFile: filepath.Join(logDir, name+".log"), bin: bin, args: args, env: env, pidLog: pids}
	if err := p.start(); err != nil {
		return nil, err
	}
	return p, nil
}

// start starts a new incarnation of the process.
func (p *Process) start() error {
	out, err := os.OpenFile(p.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\n=== %s %s %s\n", time.Now().Format(time.RFC3339), p.bin, strings.Join(p.args, " "))
	cmd := exec.Command(p.bin, p.args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = componentEnviron(os.Environ(), p.env)
	// A process group of its own lets Stop reach whatever the component
	// forks; the parent-death signal takes the component down with a
	// harness that is killed before it can clean up.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		out.Close()
		return fmt.Errorf("starting %s: %w", p.Name, err)
	}
	run := &incarnation{cmd: cmd, done: make(chan struct{})}
	p.mu.Lock()
	p.run, p.ready = run, false
	p.mu.Unlock()
	p.pidLog.add(cmd.Process.Pid)
	go func() {
		run.err = cmd.Wait()
		out.Close()
		p.pidLog.remove(cmd.Process.Pid)
		close(run.done)
		p.mu.Lock()
		onExit := p.onExit
		report := p.ready && p.run == run && onExit != nil
		p.mu.Unlock()
		if report {
			onExit(p)
		}
	}()
	return nil
}

func (p *Process) current() *incarnation {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.run
}

// markReady records that the current incarnation answered its readiness
// check: from now on its exit is reported.
func (p *Process) markReady() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ready = true
}

// Pid is the process id, also the id of its process group.
func (p *Process) Pid() int {
	return p.current().cmd.Process.Pid
}

// Done is closed when the current incarnation of the process has exited.
func (p *Process) Done() <-chan struct{} {
	return p.current().done
}

// Err returns how the process exited, once Done is closed.
func (p *Process) Err() error {
	return p.current().err
}

// Stop sends SIGTERM to the process group and waits for the process to exit,
// killing it after stopGracePeriod.
func (p *Process) Stop() {
	run := p.current()
	select {
	case <-run.done:
		return
	default:
	}
	_ = syscall.Kill(-run.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-run.done:
	case <-time.After(stopGracePeriod):
		_ = syscall.Kill(-run.cmd.Process.Pid, syscall.SIGKILL)
		<-run.done
	}
}

// Freeze stops the process group (SIGSTOP), as a hung machine would: its
// connections stay open and nothing answers.
func (p *Process) Freeze() error {
	return syscall.Kill(-p.Pid(), syscall.SIGSTOP)
}

// Thaw resumes a frozen process group (SIGCONT).
func (p *Process) Thaw() error {
	return syscall.Kill(-p.Pid(), syscall.SIGCONT)
}

// Kill ends the process group at once, as a crash would.
func (p *Process) Kill() {
	run := p.current()
	_ = syscall.Kill(-run.cmd.Process.Pid, syscall.SIGKILL)
	<-run.done
}

// logTail is the last lines of the process's log, at most n.
func (p *Process) logTail(n int) string {
	data, err := os.ReadFile(p.LogFile)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", p.LogFile, err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
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

// buildOnlyVariables are the Go runtime's settings that make test gives its
// compiles and linters (the Makefile's TEST_GOGC and TEST_GOMEMLIMIT). A
// component does not inherit them: it runs with the runtime's defaults, as
// a user runs it, so that the e2e suites and the benchmarks see its own
// memory and garbage collection.
var buildOnlyVariables = []string{"GOGC", "GOMEMLIMIT"}

// componentEnviron is the environment of a component: the harness's
// environ without buildOnlyVariables, then the component's own variables,
// which may set them again.
func componentEnviron(environ, own []string) []string {
	env := make([]string, 0, len(environ)+len(own))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(buildOnlyVariables, name) {
			env = append(env, kv)
		}
	}
	return append(env, own...)
}
