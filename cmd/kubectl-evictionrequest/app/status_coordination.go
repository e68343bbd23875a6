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
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"

	coordinationutil "github.com/evictionrequest/apiserver/pkg/api/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/bridge"
	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
)

// coordinationStatus reads records from coordination.k8s.io: the one
// EvictionRequest of a pod, named after its UID.
type coordinationStatus struct{ s *StatusOptions }

// ofPods lists the EvictionRequests of each namespace of the pods once.
func (c coordinationStatus) ofPods(ctx context.Context, pods map[types.UID]*corev1.Pod) ([]record, error) {
	namespaces := map[string]bool{}
	for _, pod := range pods {
		namespaces[pod.Namespace] = true
	}
	var records []record
	for _, ns := range sortedKeys(namespaces) {
		list, err := c.list(ctx, ns, "")
		if err != nil {
			return nil, err
		}
		for i := range list {
			if pod := pods[types.UID(list[i].Name)]; pod != nil && pod.Namespace == ns {
				records = append(records, c.record(list[i], pod))
			}
		}
	}
	return records, nil
}

func (c coordinationStatus) ofPodName(ctx context.Context, namespace, name string) ([]record, error) {
	list, err := c.list(ctx, namespace, fields.OneTermEqualSelector(v1alpha1.PodNameField, name).String())
	if err != nil {
		return nil, err
	}
	records := make([]record, 0, len(list))
	for _, er := range list {
		records = append(records, c.record(er, nil))
	}
	return records, nil
}

func (c coordinationStatus) inNamespace(ctx context.Context, namespace string, pods map[types.UID]*corev1.Pod) ([]record, error) {
	list, err := c.list(ctx, namespace, "")
	if err != nil {
		return nil, err
	}
	records := make([]record, 0, len(list))
	for _, er := range list {
		records = append(records, c.record(er, pods[types.UID(er.Name)]))
	}
	return records, nil
}

func (c coordinationStatus) eventKinds() []string { return []string{"EvictionRequest"} }

func (c coordinationStatus) list(ctx context.Context, namespace, fieldSelector string) ([]*v1alpha1.EvictionRequest, error) {
	callCtx, cancel := c.s.call(ctx)
	defer cancel()
	list, err := c.s.evr.CoordinationV1alpha1().EvictionRequests(namespace).List(callCtx, metav1.ListOptions{FieldSelector: fieldSelector})
	if err != nil {
		return nil, fmt.Errorf("listing EvictionRequests: %w", err)
	}
	requests := make([]*v1alpha1.EvictionRequest, 0, len(list.Items))
	for i := range list.Items {
		requests = append(requests, &list.Items[i])
	}
	return requests, nil
}

// record is where er stands; pod is its target while it exists.
func (c coordinationStatus) record(er *v1alpha1.EvictionRequest, pod *corev1.Pod) record {
	r := record{
		kind: "EvictionRequest", name: er.Namespace + "/" + er.Name,
		pod: types.NamespacedName{Namespace: er.Namespace, Name: coordinationutil.PodName(er)}, uid: types.UID(er.Name), target: pod,
		created:    er.CreationTimestamp.Time,
		request:    participant.CoordinationStatus(er, c.s.requesterName(), c.s.now()),
		requesters: coordinationutil.RequesterNames(er),
		chainTitle: "Interceptors", chainOrder: ", highest index first",
		noChain: "<none>: the controller evicts the pod through the Eviction API",
		chain:   interceptorChain(er),
		extra:   [][2]string{{"Cancellation policy", string(coordinationutil.CancellationPolicy(er))}},
		objects: []string{"EvictionRequest/" + er.Name},
	}
	if line, ok := bridgeLine(er.Annotations, slices.Contains(r.requesters, bridge.CoordinationRequester)); ok {
		r.extra = append(r.extra, line)
	}
	if reason := coordinationutil.CompletionReason(er); reason != "" {
		r.state = fmt.Sprintf("Complete (%s)", reason)
	}
	return r
}
