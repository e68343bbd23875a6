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
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/evictionrequest/apiserver/pkg/drain"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
)

// prepare reads the nodes and their pods and checks the user's permissions,
// before anything changes: bad input changes nothing.
func (d *DrainOptions) prepare(ctx context.Context) (map[string]drain.Selection, error) {
	var perms []permission
	perms = append(perms,
		permission{verb: "get", resource: "nodes", why: "to read the nodes"},
		permission{verb: "list", resource: "pods", why: "to find the pods of the nodes"},
		permission{verb: "watch", resource: "pods", why: "to follow the pods of the nodes"},
	)
	for _, resource := range d.api().Resources() {
		perms = append(perms,
			permission{verb: "list", group: d.api().Group(), resource: resource, why: "to follow the evictions"},
			permission{verb: "watch", group: d.api().Group(), resource: resource, why: "to follow the evictions"},
		)
	}
	if d.Cordon {
		perms = append(perms, permission{verb: "patch", resource: "nodes", why: "to cordon the nodes"})
	}
	if d.Selector != "" {
		perms = append(perms, permission{verb: "list", resource: "nodes", why: "to find the nodes of --selector"})
	}
	if err := d.checkAccess(ctx, perms); err != nil {
		return nil, err
	}
	if err := d.selectNodes(ctx); err != nil {
		return nil, err
	}
	selections := map[string]drain.Selection{}
	var refusals []string
	namespaces := map[string]bool{}
	for _, name := range d.Nodes {
		callCtx, cancel := d.call(ctx)
		_, err := d.kube.CoreV1().Nodes().Get(callCtx, name, metav1.GetOptions{})
		cancel()
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("node %q not found; nothing was changed", name)
		}
		if err != nil {
			return nil, fmt.Errorf("reading node %s: %w", name, err)
		}
		pods, err := d.listPods(ctx, name)
		if err != nil {
			return nil, err
		}
		selection := drain.Select(pods, d.drainer.Policy)
		selections[name] = selection
		if err := selection.RefusedError(overrideFlag); err != nil {
			refusals = append(refusals, fmt.Sprintf("node %s: %v", name, err))
		}
		for _, pod := range selection.Evict {
			namespaces[pod.Namespace] = true
		}
	}
	if len(refusals) > 0 {
		return nil, fmt.Errorf("%s\nnothing was changed", strings.Join(refusals, "\n"))
	}
	perms = nil
	for _, ns := range sortedKeys(namespaces) {
		perms = append(perms, d.requesterPermissions(ns, "to request the eviction of the pods in "+ns)...)
	}
	if err := d.checkAccess(ctx, perms); err != nil {
		return nil, err
	}
	return selections, nil
}

func (d *DrainOptions) listPods(ctx context.Context, node string) ([]*corev1.Pod, error) {
	callCtx, cancel := d.call(ctx)
	defer cancel()
	list, err := d.kube.CoreV1().Pods(metav1.NamespaceAll).List(callCtx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node).String(),
		LabelSelector: d.PodSelector,
	})
	if err != nil {
		return nil, fmt.Errorf("listing the pods of node %s: %w", node, err)
	}
	pods := make([]*corev1.Pod, 0, len(list.Items))
	for i := range list.Items {
		if list.Items[i].Spec.NodeName == node {
			pods = append(pods, &list.Items[i])
		}
	}
	return pods, nil
}

// selectNodes turns --selector into the nodes to drain.
func (d *DrainOptions) selectNodes(ctx context.Context) error {
	if d.Selector == "" {
		return nil
	}
	callCtx, cancel := d.call(ctx)
	defer cancel()
	list, err := d.kube.CoreV1().Nodes().List(callCtx, metav1.ListOptions{LabelSelector: d.Selector})
	if err != nil {
		return fmt.Errorf("listing the nodes of --selector %s: %w", d.Selector, err)
	}
	if len(list.Items) == 0 {
		return fmt.Errorf("no node matches --selector %s; nothing was changed", d.Selector)
	}
	for _, node := range list.Items {
		d.Nodes = append(d.Nodes, node.Name)
	}
	sort.Strings(d.Nodes)
	return nil
}

func (d *DrainOptions) cordon(ctx context.Context) error {
	for _, name := range d.Nodes {
		callCtx, cancel := d.call(ctx)
		node, err := d.kube.CoreV1().Nodes().Get(callCtx, name, metav1.GetOptions{})
		if err == nil {
			var cordoned bool
			cordoned, err = drain.Cordon(callCtx, d.kube.CoreV1(), node, "", metav1.PatchOptions{FieldManager: fieldManager})
			if err == nil && cordoned {
				fmt.Fprintf(d.Out, "node/%s cordoned\n", name)
			} else if err == nil {
				fmt.Fprintf(d.Out, "node/%s already cordoned\n", name)
			}
		}
		cancel()
		if err != nil {
			return fmt.Errorf("cordoning node %s: %w", name, err)
		}
	}
	return nil
}

// printSkipped lists the pods the drain leaves, and those it evicts only
// because of --force or --delete-emptydir-data, as kubectl drain does.
func (d *DrainOptions) printSkipped(node string, selection drain.Selection) {
	for _, reason := range drain.RefuseReasons {
		if pods := selection.Overridden[reason]; len(pods) > 0 {
			fmt.Fprintf(d.ErrOut, "Warning: node %s: evicting Pods that %s: %s\n", node, overriddenWords[reason], drain.PodList(pods))
		}
	}
	for _, reason := range drain.SkipReasons {
		pods := selection.Skipped[reason]
		if len(pods) == 0 {
			continue
		}
		fmt.Fprintf(d.ErrOut, "Warning: node %s: skipping %s pods: %s\n", node, reason, drain.PodList(pods))
	}
	d.warnOfSilentParticipants(node, selection)
}

// warnOfSilentParticipants warns of the pods whose interceptors
// (responders), if none of them answers, hold the pod longer than
// --timeout: each keeps its turn until its heartbeat deadline, and a pod
// may name up to 100 interceptors. The drain's deadline is what ends such
// a wait.
func (d *DrainOptions) warnOfSilentParticipants(node string, selection drain.Selection) {
	if d.Timeout <= 0 {
		return
	}
	api := d.api()
	for _, pod := range selection.Evict {
		if silence := api.LongestSilence(pod); silence > d.Timeout {
			fmt.Fprintf(d.ErrOut, "Warning: node %s: pod %s/%s names %d %s; if none answers, they hold it up to %s, longer than --timeout=%s (--deadline with --on-deadline=evict or delete ends the wait)\n",
				node, pod.Namespace, pod.Name, api.Participants(pod), participantsWord(api), silence, d.Timeout)
		}
	}
}

// participantsWord names the participants of a pod on api.
func participantsWord(api evictionapi.API) string {
	if api == evictionapi.Lifecycle {
		return "responders"
	}
	return "interceptors"
}

// overrideFlag names the flag that overrides a refusal.
func overrideFlag(reason drain.RefuseReason) string {
	if reason == drain.RefuseUnmanaged {
		return "use --force"
	}
	return "use --delete-emptydir-data"
}

// overriddenWords say what a pod evicted by an override is.
var overriddenWords = map[drain.RefuseReason]string{
	drain.RefuseUnmanaged: "declare no controller",
	drain.RefuseEmptyDir:  "use emptyDir local storage, whose data is lost",
}

// canListPDBs is true when the user may list and watch PodDisruptionBudgets,
// which name what blocks an eviction; a drain works without.
func (d *DrainOptions) canListPDBs(ctx context.Context) bool {
	return d.checkAccess(ctx, []permission{
		{verb: "list", group: "policy", resource: "poddisruptionbudgets", why: "to name the budget that blocks an eviction"},
		{verb: "watch", group: "policy", resource: "poddisruptionbudgets", why: "to name the budget that blocks an eviction"},
	}) == nil
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
