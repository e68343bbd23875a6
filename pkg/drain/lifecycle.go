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

package drain

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	lifecyclelisters "k8s.io/client-go/listers/lifecycle/v1alpha1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
	"github.com/evictionrequest/apiserver/pkg/util/lifecycleindex"
)

// lifecycleRequests is Kubernetes 1.37's lifecycle.k8s.io/v1alpha1 API as
// a drain speaks it: an EvictionRequest of the drain's own per pod, and the
// pod's Eviction, which says where the eviction stands.
type lifecycleRequests struct {
	requester *requester.Lifecycle
	requests  lifecyclelisters.EvictionRequestLister
	evictions cache.Indexer
}

// NewLifecycleRequests is Requests of lifecycle.k8s.io/v1alpha1: it
// requests and withdraws through r, reads the requests from requests and
// the Evictions from an informer indexed by lifecycleindex.
func NewLifecycleRequests(r *requester.Lifecycle, requests lifecyclelisters.EvictionRequestLister, evictions cache.Indexer) Requests {
	return &lifecycleRequests{requester: r, requests: requests, evictions: evictions}
}

func (l *lifecycleRequests) Requester() string { return l.requester.Name() }

func (l *lifecycleRequests) Status(namespace string, uid types.UID) RequestStatus {
	er, err := l.requests.EvictionRequests(namespace).Get(l.requester.RequestName(uid))
	if err != nil {
		er = nil
	}
	return LifecycleStatus(er, lifecycleindex.Evictions(l.evictions, namespace, uid))
}

func (l *lifecycleRequests) Request(ctx context.Context, pod *corev1.Pod) (RequestStatus, error) {
	er, err := l.requester.Request(ctx, pod)
	if err != nil {
		return RequestStatus{}, err
	}
	return LifecycleStatus(er, lifecycleindex.Evictions(l.evictions, pod.Namespace, pod.UID)), nil
}

func (l *lifecycleRequests) Withdraw(ctx context.Context, namespace string, uid types.UID) (Withdrawal, error) {
	er, err := l.requester.Get(ctx, namespace, uid)
	switch {
	case apierrors.IsNotFound(err):
		return NotWithdrawn, nil
	case err != nil:
		return NotWithdrawn, err
	case !lifecycleutil.WantsEviction(er) || lifecycleutil.IsRequestFinished(er):
		return NotWithdrawn, nil
	}
	if _, err := l.requester.Withdraw(ctx, namespace, uid); err != nil {
		return NotWithdrawn, err
	}
	return Withdrawn, nil
}

// LifecycleStatus is what a drain reads of its request er (nil when it has
// none) and the Evictions of the pod. The default evictor is no
// interceptor: while it is the active responder the pod is being evicted
// through the Eviction API, and its message counts the refusals.
func LifecycleStatus(er *lifecyclev1alpha1.EvictionRequest, evictions []*lifecyclev1alpha1.Eviction) RequestStatus {
	if er == nil {
		return RequestStatus{}
	}
	s := RequestStatus{Exists: true, Requested: lifecycleutil.WantsEviction(er)}
	if failed := lifecycleutil.Condition(er.Status.Conditions, lifecyclev1alpha1.EvictionConditionFailed); failed != nil {
		s.Message = failed.Message
	}
	ev, _ := lifecycleutil.RelevantEviction(evictions)
	if ev == nil {
		s.AwaitingInterceptor = true
		return s
	}
	s.FailedEvictions = lifecycleutil.FailedEvictions(ev)
	switch reason := lifecycleutil.FailureReason(ev); {
	case lifecycleutil.IsEvicted(ev):
		s.Complete = true
	case reason == lifecyclev1alpha1.EvictionConditionReasonCanceledDueToNoRequesters:
		s.Complete, s.Canceled = true, true
	}
	active := lifecycleutil.ActiveResponder(ev)
	s.AwaitingInterceptor = len(ev.Status.TargetResponders) == 0
	if active == "" {
		return s
	}
	status := lifecycleutil.ResponderStatus(ev, active)
	if status == nil {
		return s
	}
	s.Message = ptr.Deref(status.Message, s.Message)
	s.InterceptorDone = status.CompletionTime != nil
	s.LastHeartbeat = timeOf(status.HeartbeatTime)
	if s.LastHeartbeat == nil {
		s.LastHeartbeat = timeOf(status.StartTime)
	}
	s.ExpectedFinish = timeOf(status.ExpectedCompletionTime)
	if active != lifecycleutil.Evictor {
		s.ActiveInterceptor = active
	}
	return s
}
