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
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// KubectlResult is the outcome of a kubectl run.
type KubectlResult struct {
	Stdout, Stderr string
	Err            error
}

// Kubectl runs the kubectl binary of the cluster against kube-apiserver.
func (f *Framework) Kubectl(t testing.TB, args ...string) KubectlResult {
	t.Helper()
	return f.KubectlWithInput(t, "", args...)
}

// KubectlWithInput runs kubectl with stdin.
func (f *Framework) KubectlWithInput(t testing.TB, stdin string, args ...string) KubectlResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(*binDir, "kubectl"), append([]string{"--kubeconfig=" + f.KubeconfigPath}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(stdin), &stdout, &stderr
	err := cmd.Run()
	return KubectlResult{Stdout: stdout.String(), Stderr: stderr.String(), Err: err}
}

// MustKubectl runs kubectl and fails the test when it fails.
func (f *Framework) MustKubectl(t testing.TB, args ...string) string {
	t.Helper()
	r := f.Kubectl(t, args...)
	if r.Err != nil {
		t.Fatalf("kubectl %s: %v\n%s%s", strings.Join(args, " "), r.Err, r.Stdout, r.Stderr)
	}
	return r.Stdout
}
