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
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startSleeper starts a process that sleeps, in a process group of its
// own as the harness starts a node's machine, with argv0 as its program's
// name and args after its script, and returns it; the test kills it.
func startSleeper(t *testing.T, argv0 string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sh", append([]string{"-c", "sleep 60; :"}, args...)...)
	cmd.Args[0] = argv0
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	})
	return cmd
}

// kubeletNodeDir writes what a running node leaves in the cluster's
// directory for local-up node: its bus address and its machine's pid.
func kubeletNodeDir(t *testing.T, name, bus string, pid int) string {
	t.Helper()
	dir := t.TempDir()
	nodeDir := filepath.Join(dir, "nodes", name)
	if err := os.MkdirAll(nodeDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for file, data := range map[string]string{"bus.address": bus, "host.pid": strconv.Itoa(pid)} {
		if err := os.WriteFile(filepath.Join(nodeDir, file), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// alive says whether the process pid has not exited yet.
func alive(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	// A zombie (state Z) has exited.
	return err == nil && !strings.Contains(string(data), ") Z ")
}

// KillKubeletNode kills the node's machine, and only it: a pid of
// host.pid that another process took since is left alone, with an error.
func TestKillKubeletNodeKillsOnlyTheNodesMachine(t *testing.T) {
	const bus = "unix:path=/run/node-0/bus.sock"
	other := startSleeper(t, "sleep")
	dir := kubeletNodeDir(t, "node-0", bus, other.Process.Pid)
	if err := KillKubeletNode(dir, "node-0"); err == nil {
		t.Error("KillKubeletNode() of a pid another process took: no error")
	}
	time.Sleep(100 * time.Millisecond)
	if !alive(other.Process.Pid) {
		t.Fatal("KillKubeletNode() killed a process that is not the node's machine")
	}

	// Another node's machine is not this node's either.
	otherNode := startSleeper(t, "/bin/node-host", "--bus=unix:path=/run/node-1/bus.sock")
	dir = kubeletNodeDir(t, "node-0", bus, otherNode.Process.Pid)
	if err := KillKubeletNode(dir, "node-0"); err == nil {
		t.Error("KillKubeletNode() of another node's machine: no error")
	}

	host := startSleeper(t, "/bin/node-host", "--bus="+bus)
	dir = kubeletNodeDir(t, "node-0", bus, host.Process.Pid)
	if err := KillKubeletNode(dir, "node-0"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); alive(host.Process.Pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the node's machine still runs")
		}
	}
}

// The annotation the e2e tests set on a pod (ExitDelayAnnotation) is the
// one kubelet-node's CRI runtime reads: neither module imports the other
// (docs/development.md, "Real kubelet nodes"), so the constant is written
// twice and kept equal here.
func TestExitDelayAnnotationIsTheCRIRuntimes(t *testing.T) {
	path := filepath.Join("..", "..", "hack", "tools", "kubernetes", "kubelet-node", "cri", "runtime.go")
	file, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var value string
	ast.Inspect(file, func(n ast.Node) bool {
		if spec, ok := n.(*ast.ValueSpec); ok && len(spec.Names) == 1 && spec.Names[0].Name == "ExitDelayAnnotation" && len(spec.Values) == 1 {
			if lit, ok := spec.Values[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				value, _ = strconv.Unquote(lit.Value)
			}
		}
		return true
	})
	if value == "" {
		t.Fatalf("%s defines no string constant ExitDelayAnnotation", path)
	}
	if value != ExitDelayAnnotation {
		t.Errorf("ExitDelayAnnotation = %q, kubelet-node's CRI runtime reads %q", ExitDelayAnnotation, value)
	}
}
