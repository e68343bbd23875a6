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

package interceptor

import (
	"context"
	"fmt"
	"time"

	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	lifecycleapply "k8s.io/client-go/applyconfigurations/lifecycle/v1alpha1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"

	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
)

// lifecycleAPI is Kubernetes' lifecycle.k8s.io/v1alpha1: the interceptor
// is a responder, and holds the Evictions whose active target responder
// is its name. Its status is its own entry of status.responders, written
// with server-side apply under its name as field manager.
type lifecycleAPI struct {
	name      string
	namespace string
	client    kubernetes.Interface
}

func (l lifecycleAPI) watch() watched {
	// Only the Evictions the controller labelled with the interceptor as
	// a responder reach it.
	roles := []string{string(lifecyclev1alpha1.EvictionParticipantRoleResponder), string(lifecyclev1alpha1.EvictionParticipantRoleRequesterResponder)}
	requirement, err := labels.NewRequirement(l.name, selection.In, roles)
	if err != nil {
		// New validated the name as a label key.
		panic(err)
	}
	selector := labels.NewSelector().Add(*requirement).String()
	factory := informers.NewSharedInformerFactoryWithOptions(l.client, 0, informers.WithNamespace(l.namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = selector }))
	return watched{informer: factory.Lifecycle().V1alpha1().Evictions().Informer(), start: factory.Start, shutdown: factory.Shutdown}
}

func (l lifecycleAPI) read(ctx context.Context, namespace, name string) (*lifecyclev1alpha1.Eviction, error) {
	return l.client.LifecycleV1alpha1().Evictions(namespace).Get(ctx, name, metav1.GetOptions{})
}

func (l lifecycleAPI) owns(ev *lifecyclev1alpha1.Eviction) bool {
	return ev != nil && ev.Spec.Target.Pod != nil && lifecycleutil.IsHeldBy(ev, l.name)
}

func (l lifecycleAPI) lossReason(ev *lifecyclev1alpha1.Eviction) string {
	switch {
	case ev == nil:
		return "the Eviction was deleted"
	case lifecycleutil.IsFinished(ev):
		return "the Eviction is finished"
	case lifecycleutil.ActiveResponder(ev) != l.name:
		if tr := lifecycleutil.TargetResponder(ev, l.name); tr != nil {
			return fmt.Sprintf("the responder is %s", tr.State)
		}
		return "the Eviction was passed to another responder"
	}
	return "the responder's turn is complete"
}

func (l lifecycleAPI) pod(ev *lifecyclev1alpha1.Eviction) types.NamespacedName {
	return types.NamespacedName{Namespace: ev.Namespace, Name: ev.Spec.Target.Pod.Name}
}

func (l lifecycleAPI) declines(*lifecyclev1alpha1.Eviction) string { return "" }

// period is a tenth of the heartbeat deadline, and not shorter than the 20
// seconds the API asks responders to keep between heartbeats.
func (l lifecycleAPI) period(_ *lifecyclev1alpha1.Eviction, configured time.Duration) time.Duration {
	if configured <= 0 {
		configured = lifecycleutil.HeartbeatDeadline / 10
	}
	return min(max(configured, lifecycleutil.MinHeartbeatInterval), lifecycleutil.HeartbeatDeadline/2)
}

// write applies the responder's entry. Every field the responder owns is
// in each apply, since one left out would be removed. A heartbeat less
// than 20 seconds after the last one keeps the last time.
func (l lifecycleAPI) write(ctx context.Context, ev *lifecyclev1alpha1.Eviction, w statusWrite) (*lifecyclev1alpha1.Eviction, error) {
	entry := lifecycleapply.ResponderStatus().WithName(l.name)
	previous := lifecycleutil.ResponderStatus(ev, l.name)
	if previous == nil {
		previous = &lifecyclev1alpha1.ResponderStatus{}
	}
	if previous.StartTime != nil {
		entry.WithStartTime(*previous.StartTime)
	}
	// The last heartbeat of a turn is now: its completion.
	heartbeat := lifecycleutil.NextHeartbeat(previous.HeartbeatTime, w.now)
	if w.done {
		heartbeat = metav1.NewTime(w.now)
	}
	entry.WithHeartbeatTime(heartbeat)
	message := w.progress.Message
	if message == "" {
		message = ptr.Deref(previous.Message, "")
	}
	if w.done && w.message != "" {
		message = w.message
	}
	if message != "" {
		entry.WithMessage(lifecycleutil.ResponderMessage(message))
	}
	if expected := w.progress.ExpectedFinishTime; expected != nil && !w.done {
		entry.WithExpectedCompletionTime(lifecycleutil.ExpectedCompletion(*expected, w.now))
	}
	if w.done {
		entry.WithCompletionTime(metav1.NewTime(w.now))
	}
	apply := lifecycleapply.Eviction(ev.Name, ev.Namespace).WithResourceVersion(ev.ResourceVersion).
		WithStatus(lifecycleapply.EvictionStatus().WithResponders(entry))
	return l.client.LifecycleV1alpha1().Evictions(ev.Namespace).ApplyStatus(ctx, apply, metav1.ApplyOptions{FieldManager: l.name, Force: true})
}

// terminationEndsTurn is true: upstream's completion "may have resulted in
// target eviction (e.g. pod termination)", and a responder that keeps its
// turn until a pod deleted without an eviction is gone would be
// Interrupted by the controller's grace.
func (l lifecycleAPI) terminationEndsTurn() bool { return true }

func (l lifecycleAPI) request(ev *lifecyclev1alpha1.Eviction, r Reporter) *Request {
	return NewLifecycleRequest(ev, l.name, r)
}

func (l lifecycleAPI) scheme() *runtime.Scheme { return scheme.Scheme }
