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
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/evictionrequest/apiserver/internal/faults/history"
	"github.com/evictionrequest/apiserver/pkg/bridge"
	"github.com/evictionrequest/apiserver/pkg/controller/nodedrain"
	"github.com/evictionrequest/apiserver/pkg/drain"
)

// drainer runs the drains of the campaign and records their start and end.
type drainer struct {
	client kubernetes.Interface
	record *history.Writer
	// apiServer is kube-apiserver's URL, as the commands' kubeconfig names
	// it: an attempt that could not reach it is run again.
	apiServer  string
	binDir     string
	kubeconfig string
	// api is the campaign's API, which the plugin is told to speak.
	api string
	// deadline is the deadline of the declarative and plugin drains, which
	// then evict what is left; timeout bounds every drain.
	deadline, timeout time.Duration
	wg                sync.WaitGroup
}

// run starts a drain of kind of nodes in the background.
func (d *drainer) run(ctx context.Context, kind string, nodes []string) {
	id := kind + ":" + strings.Join(nodes, ",")
	_ = d.record.Drain(history.Drain{ID: id, Kind: kind, Nodes: nodes, Phase: history.PhaseStart, Escalation: string(drain.EscalateEvict)})
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		ctx, cancel := context.WithTimeout(ctx, d.timeout)
		defer cancel()
		var err error
		switch kind {
		case history.DrainDeclarative:
			err = d.declarative(ctx, nodes)
		case history.DrainPlugin:
			err = d.execUntilReached(ctx, id, kind, "kubectl-evictionrequest", append([]string{"drain", "--api=" + d.pluginAPI()}, append(nodes, "--force", "--ignore-daemonsets",
				"--deadline="+d.deadline.String(), "--on-deadline=evict", "--timeout="+d.timeout.String())...)...)
		case history.DrainKubectl:
			err = d.execUntilReached(ctx, id, kind, "kubectl", append([]string{"drain"}, append(nodes, "--force", "--ignore-daemonsets",
				"--delete-emptydir-data", "--timeout="+d.timeout.String())...)...)
		}
		outcome := history.OutcomeDrained
		if err != nil {
			outcome = err.Error()
		}
		_ = d.record.Drain(history.Drain{ID: id, Kind: kind, Nodes: nodes, Phase: history.PhaseEnd, Outcome: outcome})
	}()
}

// pluginAPI is the plugin's --api for the campaign's API.
func (d *drainer) pluginAPI() string {
	if d.api == apiCoordination {
		return "coordination"
	}
	return "lifecycle"
}

// execUntilReached runs the drain command bin as exec does, and runs it
// again, recording the attempt, when it failed because kube-apiserver
// could not be reached (restarted by a fault), or kube-apiserver could not
// reach the eviction API bridge, whose failurePolicy Fail then refuses the
// eviction (a replica killed by a fault): kubectl drain gives up on any
// error but 429, and an admin's maintenance script runs it again. A
// failure of any other kind ends the drain.
func (d *drainer) execUntilReached(ctx context.Context, id, kind, bin string, args ...string) error {
	for {
		err := d.exec(ctx, bin, args...)
		if err == nil || ctx.Err() != nil {
			return err
		}
		if out := err.Error(); !unreachable(out, d.apiServer) && !bridgeUnreachable(out) {
			return err
		}
		_ = d.record.Drain(history.Drain{ID: id, Kind: kind, Phase: history.PhaseRetry, Outcome: err.Error()})
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Second):
		}
	}
}

// unreachable tells whether out, a drain command's error, says that
// kube-apiserver at server could not be reached: a call to its URL, as Go's
// client reports it (`Post "URL": error`), refused, reset or cut short, or
// kubectl's own words for a refused connection (its StandardErrorMessage,
// which names the server's host:port) or for a TLS handshake that timed out
// (which names none: a drain talks to one server), as a kube-apiserver
// restarting gives. An error kube-apiserver answered (a webhook's failure,
// a refusal) names no URL of kube-apiserver's and is not.
func unreachable(out, server string) bool {
	call := regexp.MustCompile(`"` + regexp.QuoteMeta(server) + `/[^"]*": (dial tcp [^ ]+: connect: connection refused|read tcp [^ ]+: read: connection reset by peer|(unexpected )?EOF|http2: client connection lost)`)
	host := server
	if u, err := url.Parse(server); err == nil && u.Host != "" {
		host = u.Host
	}
	return call.MatchString(out) || strings.Contains(out, "The connection to the server "+host+" was refused") ||
		strings.Contains(out, "Unable to connect to the server: net/http: TLS handshake timeout")
}

// bridgeUnreachable tells whether out, a drain command's error, says that
// kube-apiserver failed to call the eviction API bridge's webhook (down,
// cut short, too slow), as kube-apiserver answers it under failurePolicy
// Fail: `failed calling webhook "<the bridge's>": failed to call webhook`.
// What the bridge itself answered (a 429, a refusal) is not.
func bridgeUnreachable(out string) bool {
	return strings.Contains(out, `failed calling webhook "`+bridge.WebhookName+`": failed to call webhook`)
}

func (d *drainer) exec(ctx context.Context, bin string, args ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(d.binDir, bin), append(args, "--kubeconfig="+d.kubeconfig)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		tail := string(out)
		if len(tail) > 400 {
			tail = tail[len(tail)-400:]
		}
		return fmt.Errorf("%s %s: %v: %s", bin, strings.Join(args, " "), err, strings.ReplaceAll(tail, "\n", " | "))
	}
	return nil
}

// declarative marks the nodes for the declarative drain, with the
// campaign's deadline, and waits until each says Drained=True.
func (d *drainer) declarative(ctx context.Context, nodes []string) error {
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
		nodedrain.DrainAnnotation: "true", nodedrain.ForceAnnotation: "true",
		drain.DeadlineAnnotation: d.deadline.String(), drain.OnDeadlineAnnotation: string(drain.EscalateEvict)}}})
	for _, node := range nodes {
		if err := retry(ctx, func(ctx context.Context) error {
			_, err := d.client.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, patch, metav1.PatchOptions{})
			return err
		}); err != nil {
			return fmt.Errorf("marking node %s for drain: %w", node, err)
		}
	}
	for _, node := range nodes {
		if err := retry(ctx, func(ctx context.Context) error {
			n, err := d.client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if !drain.IsNodeConditionTrue(n, corev1.NodeDrained) {
				return fmt.Errorf("node %s not Drained yet", node)
			}
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
}

// retry calls f every second until it succeeds or ctx ends; each call
// has 10 seconds.
func retry(ctx context.Context, f func(context.Context) error) error {
	for {
		callCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := f(callCtx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %v)", ctx.Err(), err)
		case <-time.After(time.Second):
		}
	}
}
