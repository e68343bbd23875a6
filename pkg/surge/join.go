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

package surge

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/sdk/interceptor"
	"github.com/evictionrequest/apiserver/pkg/util/podlookup"
)

// join adds pod to the surge of its Deployment, starting one if needed,
// when the Deployment can surge and a slot within maxSurge is free; it
// passes the request on when the Deployment cannot surge.
func (s *Surger) join(ctx context.Context, req *interceptor.Request, pod *corev1.Pod, rs *appsv1.ReplicaSet, dep *appsv1.Deployment, state *State) (interceptor.Result, error) {
	original := ptr.Deref(dep.Spec.Replicas, 1)
	if state != nil {
		original = state.OriginalReplicas
	}
	// Judged first, from the Deployment alone: a pod a rule gave the
	// interceptor and that it does not protect is passed on at once.
	if d := Undeclared(dep, s.cfg.Name, s.declaredBy(dep), original); d.Reason != "" {
		return s.passOn(dep, d.Reason, d.Message), nil
	}
	replicaSets, err := s.replicaSetsOf(dep)
	if err != nil {
		return interceptor.Result{}, err
	}
	hpas, err := s.hpas.HorizontalPodAutoscalers(dep.Namespace).List(labels.Everything())
	if err != nil {
		return interceptor.Result{}, err
	}
	decision := Decide(dep, rs, replicaSets, hpas, original)
	if decision.Reason != "" {
		return s.passOn(dep, decision.Reason, decision.Message), nil
	}
	if state == nil {
		if state, err = s.newState(dep, original); err != nil {
			return interceptor.Result{}, err
		}
	}
	if state.Interceptor != s.cfg.Name {
		return s.waitForSurgeOf(ctx, req, dep, state)
	}
	if int32(len(state.Pods)) >= decision.MaxSurge {
		return s.again(), req.Report(ctx, interceptor.Progress{Message: fmt.Sprintf(
			"Waiting for a surge slot of Deployment %s: its maxSurge of %d is taken by the replacement of %s.", dep.Name, decision.MaxSurge, replacing(state)),
			CancellationPolicy: v1alpha1.Allow})
	}
	if marked, err := s.markedOnServer(ctx, pod); err != nil || marked {
		// The cache lags behind a scale-back already written: the pod
		// must not be surged a second time.
		return s.again(), err
	}
	state.Pods[pod.UID] = pod.Name
	updated, err := s.write(ctx, dep, state)
	if err != nil || updated == nil {
		return s.again(), err
	}
	s.cfg.Recorder.Eventf(dep, corev1.EventTypeNormal, EventSurgeStarted,
		"Scaled to %d replicas to replace pod %s, whose eviction is requested, before it goes.", *updated.Spec.Replicas, pod.Name)
	klog.FromContext(ctx).V(2).Info("Surging the Deployment", "deployment", klog.KObj(dep), "replicas", *updated.Spec.Replicas)
	return s.again(), req.Report(ctx, interceptor.Progress{
		Message:            fmt.Sprintf("Surging Deployment %s to %d replicas to replace pod %s.", dep.Name, *updated.Spec.Replicas, pod.Name),
		ExpectedFinishTime: ptr.To(s.cfg.Clock.Now().Add(startupEstimate + time.Duration(dep.Spec.MinReadySeconds)*time.Second)),
		CancellationPolicy: v1alpha1.Allow,
	})
}

// declaredBy says whether the pod template of dep names the interceptor on
// its API: the Deployment's owner asked for it, whatever the replicas.
func (s *Surger) declaredBy(dep *appsv1.Deployment) bool {
	template := &corev1.Pod{ObjectMeta: dep.Spec.Template.ObjectMeta, Spec: dep.Spec.Template.Spec}
	return s.api().Declares(template, s.cfg.Name)
}

// newState is a surge of dep that starts now. The availability to keep is
// what dep has now, the pod to replace included, at most its replica count:
// a Deployment short of pods before the surge is not held to more.
func (s *Surger) newState(dep *appsv1.Deployment, original int32) (*State, error) {
	pods, err := s.podsOf(dep)
	if err != nil {
		return nil, err
	}
	availableNow, _, _ := replacements(pods, nil, dep.Spec.MinReadySeconds, s.cfg.Clock.Now())
	return &State{Interceptor: s.cfg.Name, OriginalReplicas: original, Available: min(availableNow, original), Pods: map[types.UID]string{}}, nil
}

// markedOnServer reads pod from the API server and says whether its
// deletion cost is lowered already, or whether it is gone or replaced.
func (s *Surger) markedOnServer(ctx context.Context, pod *corev1.Pod) (bool, error) {
	callCtx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
	defer cancel()
	live, err := podlookup.Live(callCtx, s.cfg.Kube.CoreV1(), pod.Namespace, pod.Name)
	if err != nil || live == nil || live.UID != pod.UID {
		return true, err
	}
	_, marked := live.Annotations[OriginalDeletionCostAnnotation]
	return marked, nil
}

// replacing names the pods a surge replaces, sorted.
func replacing(state *State) string {
	names := make([]string, 0, len(state.Pods))
	for _, name := range state.Pods {
		names = append(names, name)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
