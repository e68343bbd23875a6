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

package check

import (
	"encoding/json"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/evictionrequest/apiserver/internal/faults/history"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
)

// observed is one entry of an object's timeline.
type observed[T any] struct {
	time time.Time
	typ  string
	obj  *T
}

// indexed is the record sorted by object, each object's entries in the
// order the recorder saw them.
type indexed struct {
	// pods are keyed by UID; requests (our API's), lifecycleRequests and
	// evictions (lifecycle.k8s.io's) by the UID of their pod.
	pods              map[types.UID][]observed[corev1.Pod]
	requests          map[types.UID][]observed[v1alpha1.EvictionRequest]
	lifecycleRequests map[types.UID][]observed[lifecyclev1alpha1.EvictionRequest]
	evictions         map[types.UID][]observed[lifecyclev1alpha1.Eviction]
	// turns is each pod's eviction in progress, on either API, as the
	// checks judge it; lines are the requests and Evictions of each pod.
	turns map[types.UID][]turnState
	lines map[types.UID][]line
	// budgets, deployments and nodes are keyed by namespace/name.
	budgets     map[string][]observed[policyv1.PodDisruptionBudget]
	deployments map[string][]observed[appsv1.Deployment]
	nodes       map[string][]observed[corev1.Node]
	// podsByName lists the UIDs of each namespace/name of pod, oldest first.
	podsByName map[string][]types.UID
	drains     []drainRun
	end        time.Time
}

// drainRun is one drain: its start and, once it ended, its end.
type drainRun struct {
	start, end *history.Drain
	started    time.Time
	ended      time.Time
}

func index(entries []history.Entry) (*indexed, error) {
	h := &indexed{
		pods:              map[types.UID][]observed[corev1.Pod]{},
		requests:          map[types.UID][]observed[v1alpha1.EvictionRequest]{},
		lifecycleRequests: map[types.UID][]observed[lifecyclev1alpha1.EvictionRequest]{},
		evictions:         map[types.UID][]observed[lifecyclev1alpha1.Eviction]{},
		budgets:           map[string][]observed[policyv1.PodDisruptionBudget]{},
		deployments:       map[string][]observed[appsv1.Deployment]{},
		nodes:             map[string][]observed[corev1.Node]{},
		podsByName:        map[string][]types.UID{},
	}
	drains := map[string]int{}
	for i, e := range entries {
		if e.Time.After(h.end) {
			h.end = e.Time
		}
		var err error
		switch {
		case e.Drain != nil && e.Drain.Phase == history.PhaseStart:
			drains[e.Drain.ID] = len(h.drains)
			h.drains = append(h.drains, drainRun{start: e.Drain, started: e.Time})
		case e.Drain != nil && e.Drain.Phase == history.PhaseRetry:
			// An attempt ended by an outage of kube-apiserver; the drain
			// goes on, and its end is judged.
		case e.Drain != nil:
			j, ok := drains[e.Drain.ID]
			if !ok {
				return nil, fmt.Errorf("entry %d: the end of drain %q, which never started", i+1, e.Drain.ID)
			}
			h.drains[j].end, h.drains[j].ended = e.Drain, e.Time
		case e.Kind == history.KindPod:
			var pod *corev1.Pod
			if pod, err = decode[corev1.Pod](e); err == nil {
				key := pod.Namespace + "/" + pod.Name
				if _, seen := h.pods[pod.UID]; !seen {
					h.podsByName[key] = append(h.podsByName[key], pod.UID)
				}
				h.pods[pod.UID] = append(h.pods[pod.UID], observed[corev1.Pod]{e.Time, e.Type, pod})
			}
		case e.Kind == history.KindEvictionRequest:
			var r *v1alpha1.EvictionRequest
			if r, err = decode[v1alpha1.EvictionRequest](e); err == nil && r.Spec.Target.PodRef != nil {
				uid := types.UID(r.Spec.Target.PodRef.UID)
				h.requests[uid] = append(h.requests[uid], observed[v1alpha1.EvictionRequest]{e.Time, e.Type, r})
			}
		case e.Kind == history.KindLifecycleEvictionRequest:
			var r *lifecyclev1alpha1.EvictionRequest
			if r, err = decode[lifecyclev1alpha1.EvictionRequest](e); err == nil && r.Spec.Target.Pod != nil {
				uid := r.Spec.Target.Pod.UID
				h.lifecycleRequests[uid] = append(h.lifecycleRequests[uid], observed[lifecyclev1alpha1.EvictionRequest]{e.Time, e.Type, r})
			}
		case e.Kind == history.KindEviction:
			var ev *lifecyclev1alpha1.Eviction
			if ev, err = decode[lifecyclev1alpha1.Eviction](e); err == nil && ev.Spec.Target.Pod != nil {
				uid := ev.Spec.Target.Pod.UID
				h.evictions[uid] = append(h.evictions[uid], observed[lifecyclev1alpha1.Eviction]{e.Time, e.Type, ev})
			}
		case e.Kind == history.KindPodDisruptionBudget:
			var b *policyv1.PodDisruptionBudget
			if b, err = decode[policyv1.PodDisruptionBudget](e); err == nil {
				key := b.Namespace + "/" + b.Name
				h.budgets[key] = append(h.budgets[key], observed[policyv1.PodDisruptionBudget]{e.Time, e.Type, b})
			}
		case e.Kind == history.KindDeployment:
			var d *appsv1.Deployment
			if d, err = decode[appsv1.Deployment](e); err == nil {
				key := d.Namespace + "/" + d.Name
				h.deployments[key] = append(h.deployments[key], observed[appsv1.Deployment]{e.Time, e.Type, d})
			}
		case e.Kind == history.KindNode:
			var n *corev1.Node
			if n, err = decode[corev1.Node](e); err == nil {
				h.nodes[n.Name] = append(h.nodes[n.Name], observed[corev1.Node]{e.Time, e.Type, n})
			}
		}
		if err != nil {
			return nil, fmt.Errorf("entry %d (%s): %w", i+1, e.Kind, err)
		}
	}
	h.normalise()
	return h, nil
}

func decode[T any](e history.Entry) (*T, error) {
	obj := new(T)
	if err := json.Unmarshal(e.Object, obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// ended is when the recorder first saw a pod terminating or gone, and
// whether it ever did; unsure is true when it saw it only after a lost
// stretch of its watch (a Gap just before), so that the pod may have ended
// any time before.
func ended(timeline []observed[corev1.Pod]) (end time.Time, ok, unsure bool) {
	for i, o := range timeline {
		if o.typ == history.Deleted || o.obj.DeletionTimestamp != nil {
			return o.time, true, o.typ == history.Gap || (i > 0 && timeline[i-1].typ == history.Gap)
		}
	}
	return time.Time{}, false, false
}
