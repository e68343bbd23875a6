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

// Package benchutil holds what the benchmarks of test/cmd share beside the
// local control plane: running a client command with its output in the
// cluster's logs, and deleting what a measured round left.
package benchutil

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
)

// callTimeout bounds one call to kube-apiserver.
const callTimeout = 30 * time.Second

// RunLogged runs command, its output appended to <logDir>/<name>.log.
func RunLogged(ctx context.Context, logDir, name string, command []string) error {
	logFile := filepath.Join(logDir, name+".log")
	f, err := os.OpenFile(logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	cmd := exec.CommandContext(ctx, command[0], command[1:]...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w (output in %s)", strings.Join(command[:min(3, len(command))], " "), err, logFile)
	}
	return nil
}

// DeleteNamespace deletes the namespace name and waits, at most five
// minutes, until it is gone: the namespace controller's deletion of what a
// drain left (requests, Evictions, events) would otherwise run during the
// next measurement and slow it down. The deletion is sent even when ctx
// is done (a benchmark interrupted still cleans up); the wait is not.
func DeleteNamespace(ctx context.Context, client kubernetes.Interface, name string) {
	logger := klog.FromContext(ctx)
	callCtx, cancelCall := context.WithTimeout(context.WithoutCancel(ctx), callTimeout)
	err := client.CoreV1().Namespaces().Delete(callCtx, name, metav1.DeleteOptions{})
	cancelCall()
	if err != nil {
		logger.Error(err, "Deleting a drained namespace", "namespace", name)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	err = wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		callCtx, cancel := context.WithTimeout(ctx, callTimeout)
		defer cancel()
		_, err := client.CoreV1().Namespaces().Get(callCtx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		logger.Error(err, "Waiting for a drained namespace to be gone", "namespace", name)
	}
}
