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

package participant

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	lifecyclelisters "k8s.io/client-go/listers/lifecycle/v1alpha1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
	"github.com/evictionrequest/apiserver/pkg/util/lifecycleindex"
)

// lifecycle is a Participant of Kubernetes 1.37's lifecycle.k8s.io/v1alpha1:
// an EvictionRequest of the participant's own per pod, and the pod's
// Eviction, which says where the eviction stands.
type lifecycle struct {
	requester   *requester.Lifecycle
	client      kubernetes.Interface
	callTimeout time.Duration
	// requests and evictions, once Inform was called, are where Status
	// reads: the Evictions indexed by lifecycleindex.
	requests  lifecyclelisters.EvictionRequestLister
	evictions cache.Indexer
}

func (l *lifecycle) API() evictionapi.API { return evictionapi.Lifecycle }

func (l *lifecycle) Name() string { return l.requester.Name() }

func (l *lifecycle) Inform(f Informers) ([]cache.SharedIndexInformer, error) {
	lifecycleInformers := f.Kube.Lifecycle().V1alpha1()
	requests, evictions := lifecycleInformers.EvictionRequests(), lifecycleInformers.Evictions()
	if err := lifecycleindex.AddEvictions(evictions.Informer()); err != nil {
		return nil, err
	}
	l.requests, l.evictions = requests.Lister(), evictions.Informer().GetIndexer()
	return []cache.SharedIndexInformer{requests.Informer(), evictions.Informer()}, nil
}

func (l *lifecycle) Status(ctx context.Context, namespace string, uid types.UID) (Status, error) {
	if l.requests != nil {
		er, err := l.requests.EvictionRequests(namespace).Get(l.requester.RequestName(uid))
		if err != nil && !apierrors.IsNotFound(err) {
			return Status{}, err
		}
		return l.status(er, uid, lifecycleindex.Evictions(l.evictions, namespace, uid)), nil
	}
	er, err := l.requester.Get(ctx, namespace, uid)
	if err != nil && !apierrors.IsNotFound(err) {
		return Status{}, err
	}
	if err != nil {
		er = nil
	}
	evictions, err := l.listEvictions(ctx, namespace, uid)
	if err != nil {
		return Status{}, err
	}
	return l.status(er, uid, evictions), nil
}

// listEvictions lists the Evictions of the pod with uid that name the
// participant: the controller labels each Eviction with the names of its
// requesters and responders.
func (l *lifecycle) listEvictions(ctx context.Context, namespace string, uid types.UID) ([]*lifecyclev1alpha1.Eviction, error) {
	callCtx, cancel := context.WithTimeout(ctx, l.callTimeout)
	defer cancel()
	list, err := l.client.LifecycleV1alpha1().Evictions(namespace).List(callCtx, metav1.ListOptions{LabelSelector: l.Name()})
	if err != nil {
		return nil, err
	}
	var evictions []*lifecyclev1alpha1.Eviction
	for i := range list.Items {
		if lifecycleutil.EvictionTargetKey(&list.Items[i]) == lifecycleutil.TargetKey(namespace, uid) {
			evictions = append(evictions, &list.Items[i])
		}
	}
	return evictions, nil
}

func (l *lifecycle) status(er *lifecyclev1alpha1.EvictionRequest, uid types.UID, evictions []*lifecyclev1alpha1.Eviction) Status {
	s := LifecycleStatus(er, evictions, l.Name())
	s.Request = l.requester.RequestName(uid)
	if er != nil {
		s.Written = lastWritten(er.ManagedFields, l.requester.FieldManager())
	}
	return s
}

func (l *lifecycle) Request(ctx context.Context, pod *corev1.Pod, annotations map[string]string) (Status, error) {
	er, err := l.requester.RequestWithAnnotations(ctx, pod, annotations)
	if err != nil {
		return Status{}, err
	}
	var evictions []*lifecyclev1alpha1.Eviction
	if l.evictions != nil {
		evictions = lifecycleindex.Evictions(l.evictions, pod.Namespace, pod.UID)
	}
	return l.status(er, pod.UID, evictions), nil
}

func (l *lifecycle) Withdraw(ctx context.Context, namespace string, uid types.UID) (Withdrawal, error) {
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

func (l *lifecycle) Annotate(ctx context.Context, namespace string, uid types.UID, annotations map[string]*string) error {
	callCtx, cancel := context.WithTimeout(ctx, l.callTimeout)
	defer cancel()
	_, err := l.client.LifecycleV1alpha1().EvictionRequests(namespace).Patch(callCtx, l.requester.RequestName(uid), types.MergePatchType,
		annotationsPatch(annotations), metav1.PatchOptions{FieldManager: l.Name()})
	return err
}

func (l *lifecycle) Wait(ctx context.Context, pod *corev1.Pod) (requester.Result, error) {
	return l.requester.Wait(ctx, pod)
}

// LifecycleStatus is what the participant name reads of its request er
// (nil when it has none) and of the Evictions of the pod. The default
// evictor is no interceptor: while it is the active responder the pod is
// being evicted through the Eviction API, and its message counts the
// refusals.
func LifecycleStatus(er *lifecyclev1alpha1.EvictionRequest, evictions []*lifecyclev1alpha1.Eviction, name string) Status {
	var s Status
	if er != nil {
		s = Status{Exists: true, Requested: lifecycleutil.WantsEviction(er), Annotations: er.Annotations, Created: er.CreationTimestamp.Time}
		if failed := lifecycleutil.Condition(er.Status.Conditions, lifecyclev1alpha1.EvictionConditionFailed); failed != nil {
			s.Message = failed.Message
		}
	}
	ev, _ := lifecycleutil.RelevantEviction(evictions)
	if ev == nil {
		s.AwaitingInterceptor = er != nil
		return s
	}
	s.OtherRequesters = otherRequesters(ev, name)
	s.FailedEvictions = lifecycleutil.FailedEvictions(ev)
	switch reason := lifecycleutil.FailureReason(ev); {
	case lifecycleutil.IsEvicted(ev):
		s.Complete = true
	case reason == lifecyclev1alpha1.EvictionConditionReasonCanceledDueToNoRequesters:
		s.Complete, s.Canceled = true, true
	}
	active := lifecycleutil.ActiveResponder(ev)
	s.Evicting = active == lifecycleutil.Evictor && !lifecycleutil.IsFinished(ev)
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

// otherRequesters counts the requesters ev's labels name besides name.
func otherRequesters(ev *lifecyclev1alpha1.Eviction, name string) int {
	n := 0
	for label, role := range ev.Labels {
		if label == name {
			continue
		}
		switch lifecyclev1alpha1.EvictionParticipantRole(role) {
		case lifecyclev1alpha1.EvictionParticipantRoleRequester, lifecyclev1alpha1.EvictionParticipantRoleRequesterResponder:
			n++
		}
	}
	return n
}
