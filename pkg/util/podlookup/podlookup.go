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

// Package podlookup finds the pod an EvictionRequest targets: in the
// informer cache first, with one live read when the cache has no pod with
// the UID, since a request may be newer than the cache and deciding on a
// stale miss is final. The admission plugin and the controller share it.
package podlookup

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
)

// Get returns the pod name of namespace, nil when it does not exist. The
// pod may have another UID than uid: a pod of that name that replaced it.
func Get(ctx context.Context, lister corelisters.PodLister, client corev1client.PodsGetter, namespace, name string, uid types.UID) (*corev1.Pod, error) {
	if pod, err := lister.Pods(namespace).Get(name); err == nil && pod.UID == uid {
		return pod, nil
	}
	return Live(ctx, client, namespace, name)
}

// Live reads the pod name of namespace from kube-apiserver, nil when it
// does not exist.
func Live(ctx context.Context, client corev1client.PodsGetter, namespace, name string) (*corev1.Pod, error) {
	pod, err := client.Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return pod, err
}
