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
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/bridge"
	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
)

// lifecycleStatus reads records from lifecycle.k8s.io: per pod, the
// EvictionRequests of every requester and the Eviction the controller made
// of them.
type lifecycleStatus struct{ s *StatusOptions }

// lifecycleTarget is what targets one pod.
type lifecycleTarget struct {
	requests  []*lifecyclev1alpha1.EvictionRequest
	evictions []*lifecyclev1alpha1.Eviction
}

// ofPods lists each namespace of the pods once.
func (l lifecycleStatus) ofPods(ctx context.Context, pods map[types.UID]*corev1.Pod) ([]record, error) {
	namespaces := map[string]bool{}
	for _, pod := range pods {
		namespaces[pod.Namespace] = true
	}
	var records []record
	for _, ns := range sortedKeys(namespaces) {
		found, err := l.inNamespace(ctx, ns, pods)
		if err != nil {
			return nil, err
		}
		for _, r := range found {
			if r.target != nil {
				records = append(records, r)
			}
		}
	}
	return records, nil
}

func (l lifecycleStatus) ofPodName(ctx context.Context, namespace, name string) ([]record, error) {
	found, err := l.inNamespace(ctx, namespace, nil)
	if err != nil {
		return nil, err
	}
	var records []record
	for _, r := range found {
		if r.pod.Name == name {
			records = append(records, r)
		}
	}
	return records, nil
}

func (l lifecycleStatus) inNamespace(ctx context.Context, namespace string, pods map[types.UID]*corev1.Pod) ([]record, error) {
	targets, err := l.list(ctx, namespace)
	if err != nil {
		return nil, err
	}
	records := make([]record, 0, len(targets))
	for _, key := range sortedKeys(keysOf(targets)) {
		if r, ok := l.record(targets[key], pods); ok {
			records = append(records, r)
		}
	}
	return records, nil
}

func (l lifecycleStatus) eventKinds() []string { return []string{"Eviction", "EvictionRequest"} }

// list reads the EvictionRequests and Evictions of a namespace, grouped
// by target.
func (l lifecycleStatus) list(ctx context.Context, namespace string) (map[string]*lifecycleTarget, error) {
	client := l.s.kube.LifecycleV1alpha1()
	callCtx, cancel := l.s.call(ctx)
	requests, err := client.EvictionRequests(namespace).List(callCtx, metav1.ListOptions{})
	cancel()
	if err != nil {
		return nil, fmt.Errorf("listing EvictionRequests: %w", err)
	}
	callCtx, cancel = l.s.call(ctx)
	evictions, err := client.Evictions(namespace).List(callCtx, metav1.ListOptions{})
	cancel()
	if err != nil {
		return nil, fmt.Errorf("listing Evictions: %w", err)
	}
	targets := map[string]*lifecycleTarget{}
	target := func(key string) *lifecycleTarget {
		if targets[key] == nil {
			targets[key] = &lifecycleTarget{}
		}
		return targets[key]
	}
	for i := range requests.Items {
		if key := lifecycleutil.RequestTargetKey(&requests.Items[i]); key != "" {
			target(key).requests = append(target(key).requests, &requests.Items[i])
		}
	}
	for i := range evictions.Items {
		if key := lifecycleutil.EvictionTargetKey(&evictions.Items[i]); key != "" {
			target(key).evictions = append(target(key).evictions, &evictions.Items[i])
		}
	}
	return targets, nil
}

// record is where the eviction of one target stands. An Eviction left
// without requests is no one's request any more and is not shown.
func (l lifecycleStatus) record(t *lifecycleTarget, pods map[types.UID]*corev1.Pod) (record, bool) {
	if len(t.requests) == 0 {
		return record{}, false
	}
	first := t.requests[0]
	r := record{
		kind: "EvictionRequest", name: first.Namespace + "/" + first.Name,
		pod:        types.NamespacedName{Namespace: first.Namespace, Name: first.Spec.Target.Pod.Name},
		uid:        first.Spec.Target.Pod.UID,
		created:    first.CreationTimestamp.Time,
		chainTitle: "Responders", chainOrder: ", highest priority first",
		noChain: "<none yet>: the controller has not made an Eviction of the requests",
	}
	r.target = pods[r.uid]
	own := first
	var names []string
	for _, er := range t.requests {
		names = append(names, er.Name)
		r.objects = append(r.objects, "EvictionRequest/"+er.Name)
		r.requesters = append(r.requesters, requesterOf(er))
		if er.Spec.Requester == l.s.requesterName() {
			own = er
		}
		if er.CreationTimestamp.Time.Before(r.created) {
			r.created = er.CreationTimestamp.Time
		}
	}
	r.extra = [][2]string{{"EvictionRequests", strings.Join(names, ", ")}}
	for _, er := range t.requests {
		if er.Spec.Requester != bridge.LifecycleRequester {
			continue
		}
		if line, ok := bridgeLine(er.Annotations, lifecycleutil.WantsEviction(er)); ok {
			r.extra = append(r.extra, line)
		}
	}
	ev, _ := lifecycleutil.RelevantEviction(t.evictions)
	var evictions []*lifecyclev1alpha1.Eviction
	if ev != nil {
		evictions = []*lifecyclev1alpha1.Eviction{ev}
		r.kind, r.name = "Eviction", ev.Namespace+"/"+ev.Name
		r.objects = append(r.objects, "Eviction/"+ev.Name)
		r.chain = responderChain(ev)
		r.state = finalState(ev)
	}
	r.request = participant.LifecycleStatus(own, evictions, l.s.requesterName())
	return r, true
}

// requesterOf names er's requester, with its intent unless Eviction.
func requesterOf(er *lifecyclev1alpha1.EvictionRequest) string {
	if lifecycleutil.WantsEviction(er) {
		return er.Spec.Requester
	}
	return er.Spec.Requester + " (withdrawn)"
}

// responderChain lists ev's responders in the order they take turns.
func responderChain(ev *lifecyclev1alpha1.Eviction) []chainEntry {
	responders := append([]lifecyclev1alpha1.TargetResponder(nil), ev.Status.TargetResponders...)
	lifecycleutil.ResponderOrder(responders)
	chain := make([]chainEntry, 0, len(responders))
	for _, tr := range responders {
		entry := chainEntry{Index: "-", Name: tr.Name, Turn: strings.ToLower(string(tr.State))}
		if tr.Priority != nil {
			entry.Index = strconv.Itoa(int(*tr.Priority))
		}
		switch tr.State {
		case lifecyclev1alpha1.ResponderStateInactive:
			entry.Turn = "waiting"
		case lifecyclev1alpha1.ResponderStateCompleted:
			entry.Turn = "done"
		case lifecyclev1alpha1.ResponderStateActive:
			if status := lifecycleutil.ResponderStatus(ev, tr.Name); status != nil && status.CompletionTime != nil {
				entry.Turn = "completed"
			}
		}
		chain = append(chain, entry)
	}
	return chain
}

// finalState is ev's outcome with its reason, "" while it runs.
func finalState(ev *lifecyclev1alpha1.Eviction) string {
	if c := lifecycleutil.Condition(ev.Status.Conditions, lifecyclev1alpha1.EvictionConditionTargetEvicted); c != nil && c.Status == metav1.ConditionTrue {
		return fmt.Sprintf("Evicted (%s)", c.Reason)
	}
	if reason := lifecycleutil.FailureReason(ev); reason != "" {
		return fmt.Sprintf("Failed (%s)", reason)
	}
	return ""
}
