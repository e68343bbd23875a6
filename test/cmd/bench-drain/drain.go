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
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/evictionrequest/apiserver/internal/benchutil"
	"github.com/evictionrequest/apiserver/internal/localcluster"
)

// drainOnce fills a fresh node with pods and times one command draining it.
func drainOnce(ctx context.Context, cluster *localcluster.Cluster, o options, name string, c drainCase) (drained, error) {
	node, ns, cleanup, err := prepareNode(ctx, cluster, o, name, c)
	defer cleanup()
	if err != nil {
		return drained{}, err
	}
	bin, args := drainCommand(cluster, o, node, c)
	p, err := c.probeBefore(ctx, cluster)
	if err != nil {
		return drained{}, err
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	cpuBefore := benchutil.CPUByProcess(cluster.Processes())
	profiles := startProfiles(ctx, cluster, o, name, c)
	start := time.Now()
	err = cmd.Run()
	d := drained{seconds: time.Since(start).Seconds(), cpu: cpuSince(cluster, cpuBefore, cmd)}
	if err := profiles.Wait(); err != nil {
		return drained{}, err
	}
	logFile := filepath.Join(cluster.LogDir(), name+".log")
	_ = os.WriteFile(logFile, output.Bytes(), 0o644)
	if err != nil {
		return drained{}, fmt.Errorf("%s: %w (output in %s)", bin, err, logFile)
	}
	if err := c.probeAfter(ctx, cluster, p, o.pods, &d); err != nil {
		return drained{}, err
	}
	pods, err := cluster.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return drained{}, err
	}
	if len(pods.Items) != 0 {
		return drained{}, fmt.Errorf("%d pods left after %s exited", len(pods.Items), bin)
	}
	return d, nil
}

// drainCommand is the command line of the case's drain of node.
func drainCommand(cluster *localcluster.Cluster, o options, node string, c drainCase) (bin string, args []string) {
	args = []string{"--kubeconfig=" + cluster.KubeconfigPath}
	if c.direct {
		return filepath.Join(o.binDir, "evict-node"), append(args, "--node="+node, fmt.Sprintf("--timeout=%s", o.timeout))
	}
	if c.plugin {
		return filepath.Join(o.binDir, "kubectl-evictionrequest"),
			append(args, "drain", node, "--api="+o.api, "--force", "--output=lines", fmt.Sprintf("--timeout=%s", o.timeout))
	}
	return filepath.Join(o.binDir, "kubectl"),
		append(args, "drain", node, "--force", "--ignore-daemonsets", "--delete-emptydir-data", fmt.Sprintf("--timeout=%s", o.timeout))
}
