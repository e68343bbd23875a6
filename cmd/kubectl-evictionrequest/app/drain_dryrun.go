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

package app

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/evictionrequest/apiserver/pkg/drain"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
)

// dryRun prints what the drain would do and changes nothing: on the client
// alone, or, with --dry-run=server, sending the cordon and each request as
// server-side dry runs, which the servers validate, authorize and admit
// without storing them.
func (d *DrainOptions) dryRun(ctx context.Context, selections map[string]drain.Selection) error {
	suffix, request := " (dry run)", func(context.Context, *corev1.Pod) error { return nil }
	if d.DryRun == "server" {
		suffix = " (server dry run)"
		var err error
		if request, err = d.dryRunRequester(); err != nil {
			return err
		}
	}
	for _, node := range d.Nodes {
		if d.Cordon {
			if err := d.dryRunCordon(ctx, node); err != nil {
				return err
			}
			fmt.Fprintf(d.Out, "node/%s cordoned%s\n", node, suffix)
		}
		d.printSkipped(node, selections[node])
		for _, pod := range selections[node].Evict {
			if err := request(ctx, pod); err != nil {
				return fmt.Errorf("requesting the eviction of pod %s/%s%s: %w", pod.Namespace, pod.Name, suffix, err)
			}
			fmt.Fprintf(d.Out, "pod/%s requested to leave (namespace %s) as %s%s\n", pod.Name, pod.Namespace, d.requesterName(), suffix)
		}
	}
	return nil
}

// dryRunCordon sends the cordon of node as a server-side dry run, with
// --dry-run=server.
func (d *DrainOptions) dryRunCordon(ctx context.Context, name string) error {
	if d.DryRun != "server" {
		return nil
	}
	callCtx, cancel := d.call(ctx)
	defer cancel()
	node, err := d.kube.CoreV1().Nodes().Get(callCtx, name, metav1.GetOptions{})
	if err == nil {
		_, err = drain.Cordon(callCtx, d.kube.CoreV1(), node, "", metav1.PatchOptions{FieldManager: fieldManager, DryRun: []string{metav1.DryRunAll}})
	}
	if err != nil {
		return fmt.Errorf("cordoning node %s (server dry run): %w", name, err)
	}
	return nil
}

// dryRunRequester requests as the plugin's requester, in server-side dry
// runs.
func (o *Options) dryRunRequester() (func(context.Context, *corev1.Pod) error, error) {
	p, err := o.newParticipant(o.api(), requester.Options{CallTimeout: o.Client.CallTimeout, DryRun: true})
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, pod *corev1.Pod) error { _, err := p.Request(ctx, pod, nil); return err }, nil
}
