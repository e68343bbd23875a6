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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	coordinationutil "github.com/evictionrequest/apiserver/pkg/api/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	versioned "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned"
	erscheme "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned/scheme"
	"github.com/evictionrequest/apiserver/pkg/generated/informers/externalversions"
)

// coordinationAPI is coordination.k8s.io/v1alpha1: the interceptor holds
// EvictionRequests whose status.activeInterceptorName is its name.
type coordinationAPI struct {
	name      string
	namespace string
	client    versioned.Interface
}

func (c coordinationAPI) watch() watched {
	// Only the requests this interceptor is the active one of reach it.
	selector := fields.OneTermEqualSelector(v1alpha1.ActiveInterceptorNameField, c.name).String()
	factory := externalversions.NewSharedInformerFactoryWithOptions(c.client, 0,
		externalversions.WithNamespace(c.namespace),
		externalversions.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = selector }))
	return watched{informer: factory.Coordination().V1alpha1().EvictionRequests().Informer(), start: factory.Start, shutdown: factory.Shutdown}
}

func (c coordinationAPI) read(ctx context.Context, namespace, name string) (*v1alpha1.EvictionRequest, error) {
	return c.client.CoordinationV1alpha1().EvictionRequests(namespace).Get(ctx, name, metav1.GetOptions{})
}

func (c coordinationAPI) owns(er *v1alpha1.EvictionRequest) bool {
	return er != nil && er.Spec.Target.PodRef != nil && coordinationutil.IsHeldBy(er, c.name)
}

func (c coordinationAPI) lossReason(er *v1alpha1.EvictionRequest) string {
	switch {
	case er == nil:
		return "the request was deleted or passed to another interceptor"
	case coordinationutil.IsComplete(er):
		return "the request is complete"
	case coordinationutil.ActiveInterceptor(er) != c.name:
		return "the request was passed to another interceptor"
	case er.Status.ActiveInterceptorCompleted:
		return "the interceptor's turn is complete"
	}
	return "unknown"
}

func (c coordinationAPI) pod(er *v1alpha1.EvictionRequest) types.NamespacedName {
	return types.NamespacedName{Namespace: er.Namespace, Name: er.Spec.Target.PodRef.Name}
}

func (c coordinationAPI) declines(er *v1alpha1.EvictionRequest) string {
	if er.Spec.Type != "" && er.Spec.Type != v1alpha1.Soft {
		return fmt.Sprintf("Interceptor %s does not support eviction requests of type %s.", c.name, er.Spec.Type)
	}
	return ""
}

// period is a tenth of the request's heartbeat deadline, and at most half
// of it.
func (c coordinationAPI) period(er *v1alpha1.EvictionRequest, configured time.Duration) time.Duration {
	deadline := coordinationutil.HeartbeatDeadlineDuration(er)
	switch {
	case configured <= 0:
		return deadline / 10
	case configured > deadline/2:
		return deadline / 2
	}
	return configured
}

func (c coordinationAPI) write(ctx context.Context, er *v1alpha1.EvictionRequest, w statusWrite) (*v1alpha1.EvictionRequest, error) {
	updated := er.DeepCopy()
	s := &updated.Status
	now := metav1.NewTime(w.now)
	s.HeartbeatTime = &now
	if w.progress.Message != "" {
		s.Message = w.progress.Message
	}
	s.ExpectedInterceptorFinishTime = nil
	if w.progress.ExpectedFinishTime != nil && !w.done {
		s.ExpectedInterceptorFinishTime = ptr.To(metav1.NewTime(*w.progress.ExpectedFinishTime))
	}
	if w.progress.CancellationPolicy != "" {
		s.EvictionRequestCancellationPolicy = ptr.To(w.progress.CancellationPolicy)
	}
	if w.done {
		s.ActiveInterceptorCompleted = true
		if w.message != "" {
			s.Message = w.message
		}
	}
	return c.client.CoordinationV1alpha1().EvictionRequests(er.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{FieldManager: c.name})
}

// terminationEndsTurn is false: the interceptor keeps the request until
// the controller completes it once the pod is gone.
func (c coordinationAPI) terminationEndsTurn() bool { return false }

func (c coordinationAPI) request(er *v1alpha1.EvictionRequest, r Reporter) *Request {
	return NewRequest(er, r)
}

func (c coordinationAPI) scheme() *runtime.Scheme { return erscheme.Scheme }
