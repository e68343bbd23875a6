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
	"time"

	corev1 "k8s.io/api/core/v1"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	lifecycleapply "k8s.io/client-go/applyconfigurations/lifecycle/v1alpha1"
	metav1apply "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/controller/lifecycle/metrics"
	"github.com/evictionrequest/apiserver/pkg/util/podlookup"
)

// syncRequest validates the EvictionRequest key, creates the Eviction its
// pod needs, and reports that Eviction's conditions on the request.
func (c *Controller) syncRequest(ctx context.Context, key string) (time.Duration, error) {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return 0, err
	}
	er, err := c.requestLister.EvictionRequests(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	now := c.clock.Now()
	ref := er.Spec.Target.Pod
	switch {
	case lifecycleutil.IsRequestFinished(er):
		// The outcome is final, but a spec that changed since is observed
		// (status.observedGeneration), the conditions kept.
		return 0, c.writeRequestConditions(ctx, er, ownedConditions(er.Status.Conditions), event{})
	case ref == nil:
		return 0, c.writeRequestConditions(ctx, er, failed(lifecyclev1alpha1.EvictionConditionReasonEvictionInvalid, MessageUnsupportedTarget).
			conditions(now, er.Status.Conditions), event{corev1.EventTypeWarning, EventInvalid, MessageUnsupportedTarget})
	}
	ctx = klog.NewContext(ctx, klog.LoggerWithValues(klog.FromContext(ctx), "pod", klog.KRef(namespace, ref.Name), "requester", er.Spec.Requester))
	target := lifecycleutil.RequestTargetKey(er)
	evictions, err := c.credibleEvictions(ctx, c.evictionsOf(target))
	if err != nil {
		return 0, err
	}
	if len(evictions) == 0 {
		if message, err := c.invalidRequest(ctx, er); err != nil || message != "" {
			if err != nil {
				return 0, err
			}
			return 0, c.writeRequestConditions(ctx, er, failed(lifecyclev1alpha1.EvictionConditionReasonEvictionInvalid, message).
				conditions(now, er.Status.Conditions), event{corev1.EventTypeWarning, EventInvalid, message})
		}
	}
	relevant, create := lifecycleutil.RelevantEviction(evictions)
	if requests := c.requestsOf(target); create && wantsEviction(requests) {
		counts, err := c.createEviction(ctx, er, requests)
		if err != nil || counts == nil {
			// The new Eviction's first status wakes this sync again, which
			// then reports it on the request: one write of the request,
			// not two.
			return 0, err
		}
		// The cache gained an Eviction of the pod meanwhile: report it.
		relevant = counts
	}
	return 0, c.writeRequestConditions(ctx, er, mirroredConditions(now, er, relevant), event{})
}

// invalidRequest says why er's pod cannot be evicted, before any Eviction
// of it exists: the pod is missing, has another UID, or belongs to a
// scheduling group. A pod missing from the cache is read live: the request
// may be newer than the cache, and the verdict is final.
func (c *Controller) invalidRequest(ctx context.Context, er *lifecyclev1alpha1.EvictionRequest) (string, error) {
	ref := er.Spec.Target.Pod
	callCtx, cancel := context.WithTimeout(ctx, c.callTimeout)
	defer cancel()
	pod, err := podlookup.Get(callCtx, c.podLister, c.client.CoreV1(), er.Namespace, ref.Name, ref.UID)
	switch {
	case err != nil:
		return "", err
	case pod == nil:
		return MessagePodNotFound, nil
	case pod.UID != ref.UID:
		return uidMismatchMessage(ref.UID, pod.UID), nil
	case pod.Spec.SchedulingGroup != nil:
		return MessageSchedulingGroup, nil
	}
	return "", nil
}

// createEviction creates the next Eviction of er's pod, labelled with
// every participant of the pod and owned by every one of its requests, as
// the metadata sync would make it: that sync then has nothing to write.
//
// The cache may have gained an Eviction of the pod since the caller looked
// (the sync read the pod live, or the informer caught up after a restart
// of kube-apiserver or a frozen replica's thaw). So the name and the
// decision come from one list: with an Eviction of the pod that still
// counts, nothing is created; with none, the name is the next after every
// Eviction the list holds, and when kube-apiserver already has an Eviction
// of that name (one the cache has not seen yet), the apply updates it
// rather than making a second. It returns the Eviction of the pod that
// counts when the list has one, and then creates nothing.
func (c *Controller) createEviction(ctx context.Context, er *lifecyclev1alpha1.EvictionRequest, requests []*lifecyclev1alpha1.EvictionRequest) (*lifecyclev1alpha1.Eviction, error) {
	existing, err := c.evictionLister.Evictions(er.Namespace).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	credible, err := c.credibleEvictions(ctx, evictionsOfTarget(existing, lifecycleutil.RequestTargetKey(er)))
	if err != nil {
		return nil, err
	}
	if counts, create := lifecycleutil.RelevantEviction(credible); !create {
		return counts, nil
	}
	ref := er.Spec.Target.Pod
	pod, err := c.podLister.Pods(er.Namespace).Get(ref.Name)
	if apierrors.IsNotFound(err) || (err == nil && pod.UID != ref.UID) {
		pod = nil
	} else if err != nil {
		return nil, err
	}
	name := newEvictionName(ref.Name, existing)
	owners, _ := owners(&lifecyclev1alpha1.Eviction{}, requests)
	apply := lifecycleapply.Eviction(name, er.Namespace).
		WithLabels(participantLabels(&lifecyclev1alpha1.Eviction{}, pod, requests)).
		WithOwnerReferences(owners...).
		WithSpec(lifecycleapply.EvictionSpec().WithTarget(lifecycleapply.EvictionTarget().
			WithPod(lifecycleapply.EvictionPodReference().WithName(ref.Name).WithUID(ref.UID))))
	callCtx, cancel := context.WithTimeout(ctx, c.callTimeout)
	defer cancel()
	if _, err := c.client.LifecycleV1alpha1().Evictions(er.Namespace).Apply(callCtx, apply, metav1.ApplyOptions{FieldManager: FieldManager, Force: true}); err != nil {
		return nil, err
	}
	metrics.EvictionsCreated.Inc()
	klog.FromContext(ctx).V(2).Info("Created Eviction", "eviction", klog.KRef(er.Namespace, name))
	return nil, nil
}

// evictionsOfTarget are the Evictions among evictions whose target key is
// target.
func evictionsOfTarget(evictions []*lifecyclev1alpha1.Eviction, target string) []*lifecyclev1alpha1.Eviction {
	var out []*lifecyclev1alpha1.Eviction
	for _, ev := range evictions {
		if lifecycleutil.EvictionTargetKey(ev) == target {
			out = append(out, ev)
		}
	}
	return out
}

// ownerReference makes er an owner of an Eviction: the garbage collector
// deletes the Eviction once every request of its pod is gone.
func ownerReference(er *lifecyclev1alpha1.EvictionRequest) *metav1apply.OwnerReferenceApplyConfiguration {
	return metav1apply.OwnerReference().WithAPIVersion(lifecyclev1alpha1.SchemeGroupVersion.String()).
		WithKind("EvictionRequest").WithName(er.Name).WithUID(er.UID)
}

// mirroredConditions are the conditions of ev reported on er; with no
// Eviction, or none that reported yet, awaiting one.
func mirroredConditions(now time.Time, er *lifecyclev1alpha1.EvictionRequest, ev *lifecyclev1alpha1.Eviction) []metav1.Condition {
	var want []metav1.Condition
	if ev != nil {
		want = ownedConditions(ev.Status.Conditions)
	}
	if len(want) != 2 {
		return awaiting(MessageAwaitingEviction).conditions(now, er.Status.Conditions)
	}
	return setConditions(now, er.Status.Conditions, want)
}

// writeRequestConditions applies conditions and the observed generation to
// er's status, unless they are what it has, and then records e (when it
// has a reason).
func (c *Controller) writeRequestConditions(ctx context.Context, er *lifecyclev1alpha1.EvictionRequest, conditions []metav1.Condition, e event) error {
	if apiequality.Semantic.DeepEqual(ownedConditions(er.Status.Conditions), conditions) && ptr.Deref(er.Status.ObservedGeneration, 0) == er.Generation {
		return nil
	}
	if err := c.takeOverRequest(ctx, er); err != nil {
		return err
	}
	callCtx, cancel := context.WithTimeout(ctx, c.callTimeout)
	defer cancel()
	_, err := c.client.LifecycleV1alpha1().EvictionRequests(er.Namespace).ApplyStatus(callCtx,
		lifecycleapply.EvictionRequest(er.Name, er.Namespace).WithStatus(lifecycleapply.EvictionRequestStatus().
			WithObservedGeneration(er.Generation).WithConditions(conditionsApply(conditions)...)),
		metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	if err != nil {
		return err
	}
	if e.reason != "" {
		c.recorder.Event(er, e.eventType, e.reason, e.message)
	}
	return nil
}
