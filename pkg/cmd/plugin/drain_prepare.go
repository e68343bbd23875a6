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

package plugin

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
		permission{verb: "list", group: d.group(), resource: "evictionrequests", why: "to follow the evictions"},
		permission{verb: "watch", group: d.group(), resource: "evictionrequests", why: "to follow the evictions"},
	)
	if d.api == evictionapi.Lifecycle {
		perms = append(perms,
			permission{verb: "list", group: d.group(), resource: "evictions", why: "to follow the evictions"},
			permission{verb: "watch", group: d.group(), resource: "evictions", why: "to follow the evictions"},
		)
	}
	if d.Cordon {
		perms = append(perms, permission{verb: "patch", resource: "nodes", why: "to cordon the nodes"})
	}
	if err := d.checkAccess(ctx, perms); err != nil {
		return nil, err
	}
	selections := map[string]drain.Selection{}
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
		if len(pods) == 0 && !d.AllowEmpty {
			return nil, fmt.Errorf("node %s has no pods%s: nothing to drain; nothing was changed (--allow-empty cordons it anyway)", name, d.selectorSuffix())
		}
		selection := drain.Select(pods)
		selections[name] = selection
		for _, pod := range selection.Evict {
			namespaces[pod.Namespace] = true
		}
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

func (d *DrainOptions) selectorSuffix() string {
	if d.PodSelector == "" {
		return ""
	}
	return " matching " + d.PodSelector
}

func (d *DrainOptions) cordon(ctx context.Context) error {
	for _, name := range d.Nodes {
		callCtx, cancel := d.call(ctx)
		node, err := d.kube.CoreV1().Nodes().Get(callCtx, name, metav1.GetOptions{})
		if err == nil {
			var cordoned bool
			cordoned, err = drain.Cordon(callCtx, d.kube.CoreV1(), node, "", metav1.PatchOptions{FieldManager: "kubectl-evictionrequest"})
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

// printSkipped lists the pods the drain leaves, as kubectl drain does.
func (d *DrainOptions) printSkipped(node string, selection drain.Selection) {
	for _, reason := range drain.SkipReasons {
		pods := selection.Skipped[reason]
		if len(pods) == 0 {
			continue
		}
		names := make([]string, 0, len(pods))
		for _, pod := range pods {
			names = append(names, pod.Namespace+"/"+pod.Name)
		}
		fmt.Fprintf(d.ErrOut, "Warning: node %s: skipping %s pods: %s\n", node, reason, strings.Join(names, ", "))
	}
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
