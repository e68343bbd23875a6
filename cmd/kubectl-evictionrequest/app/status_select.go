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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
)

// choose finds the records to report: of the pods of a node, of the named
// pods (by name for a pod that is gone), or of a namespace.
func (s *StatusOptions) choose(ctx context.Context) ([]record, error) {
	source := s.source()
	switch {
	case s.Node != "":
		pods, err := s.podsOfNode(ctx)
		if err != nil {
			return nil, err
		}
		return source.ofPods(ctx, pods)
	case len(s.Pods) > 0:
		return s.ofNamedPods(ctx, source)
	}
	namespace := s.namespace
	if s.AllNamespaces {
		namespace = metav1.NamespaceAll
	}
	podList, err := s.listPods(ctx, namespace, "")
	if err != nil {
		return nil, err
	}
	return source.inNamespace(ctx, namespace, byUID(podList))
}

// podsOfNode lists the pods of --node by UID.
func (s *StatusOptions) podsOfNode(ctx context.Context) (map[types.UID]*corev1.Pod, error) {
	callCtx, cancel := s.call(ctx)
	_, err := s.kube.CoreV1().Nodes().Get(callCtx, s.Node, metav1.GetOptions{})
	cancel()
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("node %q not found", s.Node)
	}
	if err != nil {
		return nil, err
	}
	list, err := s.listPods(ctx, metav1.NamespaceAll, fields.OneTermEqualSelector("spec.nodeName", s.Node).String())
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("node %s has no pods", s.Node)
	}
	pods := map[types.UID]*corev1.Pod{}
	for _, pod := range list {
		if pod.Spec.NodeName == s.Node {
			pods[pod.UID] = pod
		}
	}
	return pods, nil
}

// ofNamedPods finds the records of the named pods: by UID for the pods that
// exist, by name for those that are gone.
func (s *StatusOptions) ofNamedPods(ctx context.Context, source statusSource) ([]record, error) {
	pods := map[types.UID]*corev1.Pod{}
	var records []record
	for _, name := range s.Pods {
		callCtx, cancel := s.call(ctx)
		pod, err := s.kube.CoreV1().Pods(s.namespace).Get(callCtx, name, metav1.GetOptions{})
		cancel()
		switch {
		case err == nil:
			pods[pod.UID] = pod
			continue
		case !apierrors.IsNotFound(err):
			return nil, err
		}
		found, err := source.ofPodName(ctx, s.namespace, name)
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("pod %q not found in namespace %s, and no EvictionRequest targets it", name, s.namespace)
		}
		records = append(records, found...)
	}
	if len(pods) == 0 {
		return records, nil
	}
	found, err := source.ofPods(ctx, pods)
	if err != nil {
		return nil, err
	}
	for _, pod := range pods {
		if !hasRecordOf(found, pod.UID) {
			return nil, fmt.Errorf("pod %s/%s has no EvictionRequest", pod.Namespace, pod.Name)
		}
	}
	return append(records, found...), nil
}

func hasRecordOf(records []record, uid types.UID) bool {
	for _, r := range records {
		if r.uid == uid {
			return true
		}
	}
	return false
}

// byUID indexes pods by UID.
func byUID(list []*corev1.Pod) map[types.UID]*corev1.Pod {
	pods := make(map[types.UID]*corev1.Pod, len(list))
	for _, pod := range list {
		pods[pod.UID] = pod
	}
	return pods
}

func (s *StatusOptions) listPods(ctx context.Context, namespace, fieldSelector string) ([]*corev1.Pod, error) {
	callCtx, cancel := s.call(ctx)
	defer cancel()
	list, err := s.kube.CoreV1().Pods(namespace).List(callCtx, metav1.ListOptions{FieldSelector: fieldSelector})
	if err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	pods := make([]*corev1.Pod, 0, len(list.Items))
	for i := range list.Items {
		pods = append(pods, &list.Items[i])
	}
	return pods, nil
}
