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

package requester

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	erutil "github.com/evictionrequest/apiserver/pkg/api/v1alpha1/evictionrequest"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
)

// ErrRequestDeleted is Wait's answer when the EvictionRequest was deleted
// before it completed while its pod still runs: someone canceled it by
// deleting it.
var ErrRequestDeleted = errors.New("the EvictionRequest was deleted before it completed")

// Result is how an EvictionRequest ended.
type Result struct {
	// Reason is the reason of the Complete condition:
	// v1alpha1.CompleteReasonPodDeleted, CompleteReasonPodTerminated or
	// CompleteReasonCanceled.
	Reason string
	// Message is the message of the Complete condition.
	Message string
	// EvictionRequest is the request as it completed; nil when it was
	// deleted together with its pod before it was seen complete.
	EvictionRequest *v1alpha1.EvictionRequest
}

// Evicted is true when the pod left: deleted or terminated.
func (r Result) Evicted() bool {
	return r.Reason == v1alpha1.CompleteReasonPodDeleted || r.Reason == v1alpha1.CompleteReasonPodTerminated
}

// Wait waits until the EvictionRequest of pod is complete, or ctx ends. A
// request the garbage collector deleted with its pod before it was seen
// complete counts as complete with reason PodDeleted; a request deleted
// while its pod runs is ErrRequestDeleted, and a pod that has no request
// at all is a NotFound error.
func (r *Requester) Wait(ctx context.Context, pod *corev1.Pod) (Result, error) {
	namespace, name := pod.Namespace, string(pod.UID)
	client := r.requests.EvictionRequests(namespace)
	selector := fields.OneTermEqualSelector("metadata.name", name).String()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
			options.FieldSelector = selector
			ctx, cancel := context.WithTimeout(ctx, r.opts.CallTimeout)
			defer cancel()
			return client.List(ctx, options)
		},
		WatchFuncWithContext: func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
			options.FieldSelector = selector
			return client.Watch(ctx, options)
		},
	}
	var result Result
	seen := false
	missing := func(store cache.Store) (bool, error) {
		_, exists, err := store.GetByKey(namespace + "/" + name)
		return !exists, err
	}
	_, err := watchtools.UntilWithSync(ctx, cache.ToListWatcherWithWatchListSemantics(lw, r.client), &v1alpha1.EvictionRequest{}, missing, func(event watch.Event) (bool, error) {
		er, ok := event.Object.(*v1alpha1.EvictionRequest)
		if !ok || er.Name != name {
			return false, nil
		}
		seen = true
		if event.Type == watch.Deleted {
			return true, nil
		}
		if c := erutil.GetCompleteCondition(er); erutil.IsComplete(er) {
			result = Result{Reason: c.Reason, Message: c.Message, EvictionRequest: er}
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		return Result{}, err
	}
	if result.Reason != "" {
		return result, nil
	}
	return r.missingResult(ctx, pod, seen)
}

// missingResult judges a request that is gone, or never was, by whether
// its pod is gone: the garbage collector deletes the request with its pod.
func (r *Requester) missingResult(ctx context.Context, pod *corev1.Pod, seen bool) (Result, error) {
	callCtx, cancel := context.WithTimeout(ctx, r.opts.CallTimeout)
	defer cancel()
	current, err := r.pods.Pods(pod.Namespace).Get(callCtx, pod.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err) || (err == nil && current.UID != pod.UID):
		return Result{Reason: v1alpha1.CompleteReasonPodDeleted, Message: fmt.Sprintf("Pod %s was deleted, and its EvictionRequest with it.", pod.Name)}, nil
	case err == nil && current.DeletionTimestamp != nil:
		// A foreground deletion of the pod deletes its dependents first.
		return Result{Reason: v1alpha1.CompleteReasonPodDeleted, Message: fmt.Sprintf("Pod %s is being deleted, and its EvictionRequest was deleted with it.", pod.Name)}, nil
	case err != nil:
		return Result{}, err
	case seen:
		return Result{}, ErrRequestDeleted
	}
	return Result{}, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, apierrors.NewNotFound(v1alpha1.Resource("evictionrequests"), string(pod.UID)))
}
