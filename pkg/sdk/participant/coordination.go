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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	coordinationutil "github.com/evictionrequest/apiserver/pkg/api/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	versioned "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned"
	coordinationlisters "github.com/evictionrequest/apiserver/pkg/generated/listers/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
)

// coordination is a Participant of coordination.k8s.io/v1alpha1: one
// EvictionRequest per pod, named after its UID, where the participant
// lists itself among the requesters through the SDK's requester.
type coordination struct {
	requester *requester.Requester
	client    versioned.Interface
	// lister, once Inform was called, is where Status reads.
	lister coordinationlisters.EvictionRequestLister
}

func (c *coordination) API() evictionapi.API { return evictionapi.Coordination }

func (c *coordination) Name() string { return c.requester.Name() }

func (c *coordination) Inform(f Informers) ([]cache.SharedIndexInformer, error) {
	informer := f.EvictionRequests.Coordination().V1alpha1().EvictionRequests()
	c.lister = informer.Lister()
	return []cache.SharedIndexInformer{informer.Informer()}, nil
}

func (c *coordination) Status(ctx context.Context, namespace string, uid types.UID) (Status, error) {
	var er *v1alpha1.EvictionRequest
	var err error
	if c.lister != nil {
		er, err = c.lister.EvictionRequests(namespace).Get(string(uid))
	} else {
		er, err = c.requester.Get(ctx, namespace, uid)
	}
	if apierrors.IsNotFound(err) {
		return Status{Request: string(uid)}, nil
	}
	if err != nil {
		return Status{}, err
	}
	return c.status(er), nil
}

func (c *coordination) Request(ctx context.Context, pod *corev1.Pod, annotations map[string]string) (Status, error) {
	er, err := c.requester.RequestWithAnnotations(ctx, pod, annotations)
	if err != nil {
		return Status{}, err
	}
	return c.status(er), nil
}

// status is where er stands for the participant now, with the last time
// the server recorded its write.
func (c *coordination) status(er *v1alpha1.EvictionRequest) Status {
	s := CoordinationStatus(er, c.Name(), time.Now())
	s.Written = lastWritten(er.ManagedFields, c.requester.FieldManager())
	return s
}

func (c *coordination) Withdraw(ctx context.Context, namespace string, uid types.UID) (Withdrawal, error) {
	er, err := c.requester.Withdraw(ctx, namespace, uid)
	switch {
	case requester.IsCancellationForbidden(err):
		return WithdrawalForbidden, err
	case err != nil:
		return NotWithdrawn, err
	case er == nil || coordinationutil.IsComplete(er) || coordinationutil.HasRequester(er, c.Name()):
		return NotWithdrawn, nil
	}
	return Withdrawn, nil
}

func (c *coordination) Annotate(ctx context.Context, namespace string, uid types.UID, annotations map[string]*string) error {
	callCtx, cancel := context.WithTimeout(ctx, c.requester.CallTimeout())
	defer cancel()
	_, err := c.client.CoordinationV1alpha1().EvictionRequests(namespace).Patch(callCtx, string(uid), types.MergePatchType,
		annotationsPatch(annotations), metav1.PatchOptions{FieldManager: c.requester.Name()})
	return err
}

func (c *coordination) Wait(ctx context.Context, pod *corev1.Pod) (requester.Result, error) {
	return c.requester.Wait(ctx, pod)
}

// CoordinationStatus is what the participant name reads of er at now; nil
// is no request.
func CoordinationStatus(er *v1alpha1.EvictionRequest, name string, now time.Time) Status {
	if er == nil {
		return Status{}
	}
	active := coordinationutil.ActiveInterceptor(er)
	requested := coordinationutil.HasRequester(er, name)
	others := len(er.Spec.Requesters)
	if requested {
		others--
	}
	complete := coordinationutil.IsComplete(er)
	return Status{
		Request:             er.Name,
		Exists:              true,
		Requested:           requested,
		OtherRequesters:     others,
		Locked:              coordinationutil.CancellationForbidden(er),
		Complete:            complete,
		Canceled:            coordinationutil.IsCanceled(er),
		ActiveInterceptor:   active,
		InterceptorDone:     er.Status.ActiveInterceptorCompleted,
		AwaitingInterceptor: active == "" && len(er.Spec.Interceptors) > 0,
		Evicting:            !complete && coordinationutil.AtEvictionStep(er, now),
		LastHeartbeat:       timeOf(er.Status.HeartbeatTime),
		ExpectedFinish:      timeOf(er.Status.ExpectedInterceptorFinishTime),
		FailedEvictions:     coordinationutil.FailedEvictions(er),
		Message:             er.Status.Message,
		Annotations:         er.Annotations,
		Created:             er.CreationTimestamp.Time,
	}
}

func timeOf(t *metav1.Time) *time.Time {
	if t == nil {
		return nil
	}
	return ptr.To(t.Time)
}
