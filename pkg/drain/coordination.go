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
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	erutil "github.com/evictionrequest/apiserver/pkg/api/v1alpha1/evictionrequest"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	coordinationlisters "github.com/evictionrequest/apiserver/pkg/generated/listers/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
)

// evictionRequests is the coordination.k8s.io/v1alpha1 EvictionRequest API
// as a drain speaks it: one request per pod, named after its UID, which
// the drain joins through the SDK's requester.
type evictionRequests struct {
	requester *requester.Requester
	lister    coordinationlisters.EvictionRequestLister
}

// NewEvictionRequests is Requests of coordination.k8s.io/v1alpha1: it
// requests and withdraws through r and reads the requests from lister.
func NewEvictionRequests(r *requester.Requester, lister coordinationlisters.EvictionRequestLister) Requests {
	return &evictionRequests{requester: r, lister: lister}
}

func (e *evictionRequests) Requester() string { return e.requester.Name() }

func (e *evictionRequests) Status(namespace string, uid types.UID) RequestStatus {
	er, err := e.lister.EvictionRequests(namespace).Get(string(uid))
	if err != nil {
		return RequestStatus{}
	}
	return EvictionRequestStatus(er, e.requester.Name())
}

// EvictionRequestStatus is what a drain of requester reads of er; nil is no
// request.
func EvictionRequestStatus(er *v1alpha1.EvictionRequest, requester string) RequestStatus {
	if er == nil {
		return RequestStatus{}
	}
	active := erutil.ActiveInterceptor(er)
	return RequestStatus{
		Exists:              true,
		Requested:           erutil.HasRequester(er, requester),
		Locked:              erutil.CancellationForbidden(er),
		Complete:            erutil.IsComplete(er),
		Canceled:            erutil.IsCanceled(er),
		ActiveInterceptor:   active,
		InterceptorDone:     er.Status.ActiveInterceptorCompleted,
		AwaitingInterceptor: active == "" && len(er.Spec.Interceptors) > 0,
		LastHeartbeat:       timeOf(er.Status.HeartbeatTime),
		ExpectedFinish:      timeOf(er.Status.ExpectedInterceptorFinishTime),
		FailedEvictions:     erutil.FailedEvictions(er),
		Message:             er.Status.Message,
	}
}

func (e *evictionRequests) Request(ctx context.Context, pod *corev1.Pod) (RequestStatus, error) {
	er, err := e.requester.Request(ctx, pod)
	if err != nil {
		return RequestStatus{}, err
	}
	return EvictionRequestStatus(er, e.requester.Name()), nil
}

func (e *evictionRequests) Withdraw(ctx context.Context, namespace string, uid types.UID) (Withdrawal, error) {
	er, err := e.requester.Withdraw(ctx, namespace, uid)
	switch {
	case requester.IsCancellationForbidden(err):
		return WithdrawalForbidden, err
	case err != nil:
		return NotWithdrawn, err
	case er == nil || erutil.IsComplete(er) || erutil.HasRequester(er, e.requester.Name()):
		return NotWithdrawn, nil
	}
	return Withdrawn, nil
}

func timeOf(t *metav1.Time) *time.Time {
	if t == nil {
		return nil
	}
	return ptr.To(t.Time)
}
