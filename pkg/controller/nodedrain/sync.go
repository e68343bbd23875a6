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

package nodedrain

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/drain"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
)

// Reasons of the events on Nodes.
const (
	EventCordoned     = "DrainCordoned"
	EventUncordoned   = "DrainUncordoned"
	EventDrainStarted = "DrainStarted"
	EventDrained      = "Drained"
	EventDrainStopped = "DrainStopped"
	// EventWithdrawForbidden: the drain ended but an interceptor forbids
	// canceling the eviction of some pods; the withdrawal is retried.
	EventWithdrawForbidden = "DrainWithdrawForbidden"
)

// requestParallelism bounds the EvictionRequests one node's sync writes at
// once.
const requestParallelism = 16

// sync drains the node, or ends its drain.
func (c *Controller) sync(ctx context.Context, name string) (time.Duration, error) {
	node, err := c.nodeLister.Get(name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	objs, err := c.podIndexer.ByIndex(PodNodeNameIndex, name)
	if err != nil {
		return 0, err
	}
	pods := make([]*corev1.Pod, 0, len(objs))
	for _, obj := range objs {
		if pod, ok := obj.(*corev1.Pod); ok {
			pods = append(pods, pod)
		}
	}
	state := drainState(node)
	if state.wanted() {
		return 0, c.drain(ctx, node, state, pods)
	}
	return c.undrain(ctx, node, state, pods)
}

// drain cordons a marked node, requests the eviction of its pods and
// reports the progress on the Node.
func (c *Controller) drain(ctx context.Context, node *corev1.Node, state nodeState, pods []*corev1.Pod) error {
	if state.marked {
		callCtx, cancel := context.WithTimeout(ctx, c.callTimeout)
		cordoned, err := drain.Cordon(callCtx, c.kubeClient.CoreV1(), node, c.requester.Name(), metav1.PatchOptions{FieldManager: ControllerName})
		cancel()
		if err != nil {
			return fmt.Errorf("cordoning node %s: %w", node.Name, err)
		}
		if cordoned {
			c.recorder.Eventf(node, corev1.EventTypeNormal, EventCordoned, "Cordoned node %s for its drain through EvictionRequests.", node.Name)
		}
	}
	selection := drain.Select(pods)
	progress := make([]drain.PodProgress, len(selection.Evict))
	var mu sync.Mutex
	var errs []error
	workqueue.ParallelizeUntil(ctx, requestParallelism, len(selection.Evict), func(i int) {
		pod := selection.Evict[i]
		er := c.evictionRequestOf(pod)
		if c.needsRequest(er) {
			requested, err := c.requester.Request(ctx, pod)
			if err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("requesting the eviction of pod %s/%s: %w", pod.Namespace, pod.Name, err))
				mu.Unlock()
			} else {
				er = requested
			}
		}
		pdbs, _ := c.pdbLister.PodDisruptionBudgets(pod.Namespace).List(labels.Everything())
		progress[i] = drain.Progress(types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}, pod.UID, pod, er, pdbs)
	})
	errs = append(errs, c.setConditions(ctx, node, state, selection, drain.Summarize(progress)))
	return errors.Join(errs...)
}

// undrain withdraws from the requests of the node's pods that are not
// complete and uncordons the node if the drain cordoned it.
func (c *Controller) undrain(ctx context.Context, node *corev1.Node, state nodeState, pods []*corev1.Pod) (time.Duration, error) {
	logger := klog.FromContext(ctx)
	var errs []error
	withdrawn, forbidden := 0, 0
	for _, pod := range pods {
		er := c.evictionRequestOf(pod)
		if er == nil || !listed(er, c.requester.Name()) || isComplete(er) {
			continue
		}
		_, err := c.requester.Withdraw(ctx, pod.Namespace, pod.UID)
		switch {
		case requester.IsCancellationForbidden(err):
			forbidden++
		case err != nil:
			errs = append(errs, fmt.Errorf("withdrawing from the EvictionRequest of pod %s/%s: %w", pod.Namespace, pod.Name, err))
		default:
			withdrawn++
		}
	}
	if withdrawn > 0 {
		logger.V(2).Info("Withdrew from the EvictionRequests of the node's pods", "count", withdrawn)
	}
	if len(errs) > 0 {
		return 0, errors.Join(errs...)
	}
	if forbidden > 0 {
		c.recorder.Eventf(node, corev1.EventTypeWarning, EventWithdrawForbidden,
			"The drain of node %s ended, but the interceptors of %d pods forbid canceling their eviction; retrying in %s.", node.Name, forbidden, forbiddenRetry)
		return forbiddenRetry, nil
	}
	if state.cordonedBy == c.requester.Name() {
		callCtx, cancel := context.WithTimeout(ctx, c.callTimeout)
		uncordoned, err := drain.Uncordon(callCtx, c.kubeClient.CoreV1(), node, c.requester.Name(), metav1.PatchOptions{FieldManager: ControllerName})
		cancel()
		if err != nil {
			return 0, fmt.Errorf("uncordoning node %s: %w", node.Name, err)
		}
		if uncordoned && node.Spec.Unschedulable {
			c.recorder.Eventf(node, corev1.EventTypeNormal, EventUncordoned, "Uncordoned node %s, which its drain had cordoned.", node.Name)
		}
	}
	c.announce(node.Name, "")
	if state.conditions {
		if err := c.removeConditions(ctx, node.Name); err != nil {
			return 0, err
		}
		c.recorder.Eventf(node, corev1.EventTypeNormal, EventDrainStopped,
			"Node %s is no longer to be drained; withdrew from the EvictionRequests of %s that were not complete.", node.Name, drain.Pods(withdrawn))
	}
	return 0, nil
}

// evictionRequestOf is the pod's EvictionRequest in the cache, nil if none.
func (c *Controller) evictionRequestOf(pod *corev1.Pod) *v1alpha1.EvictionRequest {
	er, err := c.erLister.EvictionRequests(pod.Namespace).Get(string(pod.UID))
	if err != nil {
		return nil
	}
	return er
}

// needsRequest is true when the drain must ask for the eviction of a pod
// whose request is er: there is none, it completed as canceled while the
// pod runs, or it does not list the drain yet (and still may).
func (c *Controller) needsRequest(er *v1alpha1.EvictionRequest) bool {
	if er == nil {
		return true
	}
	if complete := apimeta.FindStatusCondition(er.Status.Conditions, string(v1alpha1.EvictionRequestComplete)); complete != nil && complete.Status == metav1.ConditionTrue {
		return complete.Reason == v1alpha1.CompleteReasonCanceled
	}
	if listed(er, c.requester.Name()) {
		return false
	}
	// Under Forbid the requesters are locked: the eviction goes ahead without us.
	policy := er.Status.EvictionRequestCancellationPolicy
	return policy == nil || *policy != v1alpha1.Forbid
}

func listed(er *v1alpha1.EvictionRequest, name string) bool {
	for _, r := range er.Spec.Requesters {
		if r.Name == name {
			return true
		}
	}
	return false
}

func isComplete(er *v1alpha1.EvictionRequest) bool {
	return apimeta.IsStatusConditionTrue(er.Status.Conditions, string(v1alpha1.EvictionRequestComplete))
}
