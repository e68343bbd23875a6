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

package lifecycle

import (
	"context"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	lifecycleapply "k8s.io/client-go/applyconfigurations/lifecycle/v1alpha1"
	metav1apply "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/tools/cache"

	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
)

// syncMetadata labels the Eviction key with its participants, so that each
// finds its Evictions with a label selector on its name, and makes every
// request of its pod an owner of it, so that it is collected once they
// are all gone.
func (c *Controller) syncMetadata(ctx context.Context, key string) (time.Duration, error) {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return 0, err
	}
	ev, err := c.evictionLister.Evictions(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	ref := ev.Spec.Target.Pod
	if ref == nil {
		return 0, nil
	}
	pod, err := c.podLister.Pods(namespace).Get(ref.Name)
	if err != nil && !apierrors.IsNotFound(err) {
		return 0, err
	}
	if pod != nil && pod.UID != ref.UID {
		pod = nil
	}
	requests := c.requestsOf(lifecycleutil.EvictionTargetKey(ev))
	if len(ev.OwnerReferences) > 0 && !slices.ContainsFunc(requests, func(er *lifecyclev1alpha1.EvictionRequest) bool { return er.DeletionTimestamp == nil }) {
		// The requests that own the Eviction are all going: the garbage
		// collector removes it next, and its labels no longer matter.
		return 0, nil
	}
	labels := participantLabels(ev, pod, requests)
	owners, added := owners(ev, requests)
	if !labelsChanged(ev.Labels, labels) && !added {
		return 0, nil
	}
	if err := c.takeOverEviction(ctx, ev); err != nil {
		return 0, err
	}
	apply := lifecycleapply.Eviction(ev.Name, ev.Namespace).WithLabels(labels).WithOwnerReferences(owners...).
		WithSpec(lifecycleapply.EvictionSpec().WithTarget(lifecycleapply.EvictionTarget().
			WithPod(lifecycleapply.EvictionPodReference().WithName(ref.Name).WithUID(ref.UID))))
	callCtx, cancel := context.WithTimeout(ctx, c.callTimeout)
	defer cancel()
	_, err = c.client.LifecycleV1alpha1().Evictions(namespace).Apply(callCtx, apply, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	return 0, err
}

// participantLabels are the labels naming ev's participants: each
// requester, and each responder of its pod (or, once the pod is gone, the
// responders ev was labelled with), as requester, responder or both.
func participantLabels(ev *lifecyclev1alpha1.Eviction, pod *corev1.Pod, requests []*lifecyclev1alpha1.EvictionRequest) map[string]string {
	requester := map[string]bool{}
	for _, er := range requests {
		requester[er.Spec.Requester] = true
	}
	var responders []string
	if pod != nil {
		for _, r := range lifecycleutil.PodResponders(pod) {
			responders = append(responders, r.Name)
		}
	} else {
		for name, role := range ev.Labels {
			if role == string(lifecyclev1alpha1.EvictionParticipantRoleResponder) || role == string(lifecyclev1alpha1.EvictionParticipantRoleRequesterResponder) {
				responders = append(responders, name)
			}
		}
	}
	labels := map[string]string{}
	for name := range requester {
		labels[name] = string(lifecyclev1alpha1.EvictionParticipantRoleRequester)
	}
	for _, name := range responders {
		labels[name] = string(lifecycleutil.ParticipantRole(requester[name], true))
	}
	return labels
}

// labelsChanged is true when want adds or changes a label of have, or a
// requester label of have is no longer wanted; responder labels never go.
func labelsChanged(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return true
		}
	}
	for k, v := range have {
		if _, ok := want[k]; !ok && v == string(lifecyclev1alpha1.EvictionParticipantRoleRequester) {
			return true
		}
	}
	return false
}

// owners are the owner references ev should have: those to
// EvictionRequests it has (removing one is the garbage collector's job,
// which it may be doing), and one to each request of its pod that is not
// being deleted. added is true when that is new.
func owners(ev *lifecyclev1alpha1.Eviction, requests []*lifecyclev1alpha1.EvictionRequest) (refs []*metav1apply.OwnerReferenceApplyConfiguration, added bool) {
	have := map[types.UID]bool{}
	for _, ref := range ev.OwnerReferences {
		if ref.APIVersion == lifecyclev1alpha1.SchemeGroupVersion.String() && ref.Kind == "EvictionRequest" {
			have[ref.UID] = true
			refs = append(refs, metav1apply.OwnerReference().WithAPIVersion(ref.APIVersion).WithKind(ref.Kind).WithName(ref.Name).WithUID(ref.UID))
		}
	}
	for _, er := range requests {
		if er.DeletionTimestamp == nil && !have[er.UID] {
			refs = append(refs, ownerReference(er))
			added = true
		}
	}
	return refs, added
}
