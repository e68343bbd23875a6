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
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	autoscalinglisters "k8s.io/client-go/listers/autoscaling/v2"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	versioned "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/util/podlookup"
)

// Reasons of the events on Deployments.
const (
	EventSurgeStarted    = "SurgeStarted"
	EventSurgeScaledDown = "SurgeScaledDown"
	EventSurgeReverted   = "SurgeReverted"
	EventSurgePassedOn   = "SurgePassedOn"
	EventSurgeRetried    = "SurgeRetried"
)

// Config configures a Surger.
type Config struct {
	// Name is the interceptor name the Surger answers as.
	Name string
	// Kube reads pods and EvictionRequests' pods and writes Deployments
	// and pod annotations.
	Kube kubernetes.Interface
	// API is the EvictionRequest API the Surger answers on
	// (coordination.k8s.io when empty).
	API evictionapi.API
	// EvictionRequests reads the requests the janitor checks on
	// coordination.k8s.io; on lifecycle.k8s.io it reads the Evictions
	// through Kube.
	EvictionRequests versioned.Interface
	// Informers provide the pods, ReplicaSets, Deployments and
	// HorizontalPodAutoscalers; the caller starts them.
	Informers informers.SharedInformerFactory
	// Recorder records events on Deployments.
	Recorder record.EventRecorder
	// Clock is the Surger's notion of now.
	Clock clock.PassiveClock
	// PollInterval is how soon the handler looks again while a surge waits.
	PollInterval time.Duration
	// CallTimeout bounds every API call.
	CallTimeout time.Duration
}

// Surger replaces the pods of Deployments by surging them.
type Surger struct {
	cfg         Config
	pods        corelisters.PodLister
	replicaSets appslisters.ReplicaSetLister
	deployments appslisters.DeploymentLister
	hpas        autoscalinglisters.HorizontalPodAutoscalerLister
	synced      []cache.InformerSynced
}

// New returns a Surger on the informers of cfg, which it requests.
func New(cfg Config) *Surger {
	f := cfg.Informers
	s := &Surger{
		cfg:         cfg,
		pods:        f.Core().V1().Pods().Lister(),
		replicaSets: f.Apps().V1().ReplicaSets().Lister(),
		deployments: f.Apps().V1().Deployments().Lister(),
		hpas:        f.Autoscaling().V2().HorizontalPodAutoscalers().Lister(),
	}
	s.synced = []cache.InformerSynced{
		f.Core().V1().Pods().Informer().HasSynced, f.Apps().V1().ReplicaSets().Informer().HasSynced,
		f.Apps().V1().Deployments().Informer().HasSynced, f.Autoscaling().V2().HorizontalPodAutoscalers().Informer().HasSynced,
	}
	return s
}

// api is the EvictionRequest API the Surger answers on.
func (s *Surger) api() evictionapi.API {
	if s.cfg.API == evictionapi.Auto {
		return evictionapi.Coordination
	}
	return s.cfg.API
}

// WaitForCacheSync waits until the informers of the Surger have synced.
func (s *Surger) WaitForCacheSync(ctx context.Context) bool {
	return cache.WaitForNamedCacheSyncWithContext(ctx, s.synced...)
}

// errOwnerNotCached is a pod whose ReplicaSet or Deployment the caches do
// not know yet: the handler retries rather than judge it without an owner.
var errOwnerNotCached = errors.New("the owner of the pod is not in the cache yet")

// ownersOf returns the ReplicaSet and Deployment that control pod; nil, nil
// when it is not a Deployment's pod.
func (s *Surger) ownersOf(pod *corev1.Pod) (*appsv1.ReplicaSet, *appsv1.Deployment, error) {
	ref := metav1.GetControllerOf(pod)
	if ref == nil || ref.Kind != "ReplicaSet" || ref.APIVersion != appsv1.SchemeGroupVersion.String() {
		return nil, nil, nil
	}
	rs, err := s.replicaSets.ReplicaSets(pod.Namespace).Get(ref.Name)
	if apierrors.IsNotFound(err) || (err == nil && rs.UID != ref.UID) {
		return nil, nil, fmt.Errorf("ReplicaSet %s of pod %s: %w", ref.Name, pod.Name, errOwnerNotCached)
	}
	if err != nil {
		return nil, nil, err
	}
	ref = metav1.GetControllerOf(rs)
	if ref == nil || ref.Kind != "Deployment" || ref.APIVersion != appsv1.SchemeGroupVersion.String() {
		return rs, nil, nil
	}
	dep, err := s.deployments.Deployments(pod.Namespace).Get(ref.Name)
	if apierrors.IsNotFound(err) || (err == nil && dep.UID != ref.UID) {
		return nil, nil, fmt.Errorf("the Deployment %s of pod %s: %w", ref.Name, pod.Name, errOwnerNotCached)
	}
	return rs, dep, err
}

// replicaSetsOf lists the ReplicaSets dep controls.
func (s *Surger) replicaSetsOf(dep *appsv1.Deployment) ([]*appsv1.ReplicaSet, error) {
	all, err := s.replicaSets.ReplicaSets(dep.Namespace).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	var owned []*appsv1.ReplicaSet
	for _, rs := range all {
		if ref := metav1.GetControllerOf(rs); ref != nil && ref.UID == dep.UID {
			owned = append(owned, rs)
		}
	}
	return owned, nil
}

// podsOf lists the pods of dep: those of the ReplicaSets it controls.
func (s *Surger) podsOf(dep *appsv1.Deployment) ([]*corev1.Pod, error) {
	replicaSets, err := s.replicaSetsOf(dep)
	if err != nil {
		return nil, err
	}
	owned := map[types.UID]bool{}
	for _, rs := range replicaSets {
		owned[rs.UID] = true
	}
	selector, err := metav1.LabelSelectorAsSelector(dep.Spec.Selector)
	if err != nil {
		return nil, err
	}
	candidates, err := s.pods.Pods(dep.Namespace).List(selector)
	if err != nil {
		return nil, err
	}
	var pods []*corev1.Pod
	for _, pod := range candidates {
		if ref := metav1.GetControllerOf(pod); ref != nil && owned[ref.UID] {
			pods = append(pods, pod)
		}
	}
	return pods, nil
}

// currentState reads the surge on dep. A replica count someone else set
// meanwhile counts as follows: more than the surge asked for is a scale-up,
// adopted as the new original count; less is a scale-down to it, or, when it
// is the original count, an apply of the Deployment's manifest that undid
// the surge, which is then applied again. The surge never makes the
// Deployment smaller than someone asked for.
func currentState(dep *appsv1.Deployment) (*State, error) {
	state, err := stateOf(dep)
	if err != nil || state == nil {
		return state, err
	}
	replicas := ptr.Deref(dep.Spec.Replicas, 1)
	switch surged := state.surged(); {
	case replicas > surged:
		state.OriginalReplicas = replicas - int32(len(state.Pods))
	case replicas < surged:
		state.OriginalReplicas = min(state.OriginalReplicas, replicas)
	}
	return state, nil
}

// write writes state to dep and returns the Deployment written. A conflict
// is no error: someone (the Deployment controller, a janitor) wrote dep
// meanwhile; write returns nil and the caller looks again.
func (s *Surger) write(ctx context.Context, dep *appsv1.Deployment, state *State) (*appsv1.Deployment, error) {
	updated, err := applyState(dep, state)
	if err != nil {
		return nil, err
	}
	if err := s.updateDeployment(ctx, updated); apierrors.IsConflict(err) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return updated, nil
}

// updateDeployment writes dep, whose resourceVersion guards against writes
// made since it was read.
func (s *Surger) updateDeployment(ctx context.Context, dep *appsv1.Deployment) error {
	callCtx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
	defer cancel()
	_, err := s.cfg.Kube.AppsV1().Deployments(dep.Namespace).Update(callCtx, dep, metav1.UpdateOptions{FieldManager: s.cfg.Name})
	return err
}

// livePod returns the pod of a request, from the cache or, when the cache
// has no pod with uid, from the API server (podlookup.Get): a request may be
// newer than the cache. It returns nil when the pod is gone.
func (s *Surger) livePod(ctx context.Context, ref types.NamespacedName, uid types.UID) (*corev1.Pod, error) {
	callCtx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
	defer cancel()
	pod, err := podlookup.Get(callCtx, s.pods, s.cfg.Kube.CoreV1(), ref.Namespace, ref.Name, uid)
	if err != nil || pod == nil || pod.UID != uid {
		return nil, err
	}
	return pod, nil
}
