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

package cachetransform

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	podutil "github.com/evictionrequest/apiserver/pkg/api/v1/pod"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/drain"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
)

// fullPod is a pod as the cluster stores it: most of it is of no use to the
// server's readers.
func fullPod() *corev1.Pod {
	now := metav1.NewTime(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-0", Namespace: "shop", UID: "uid-1", ResourceVersion: "42", Generation: 3,
			CreationTimestamp: now, DeletionTimestamp: &now, DeletionGracePeriodSeconds: ptr.To[int64](30),
			Labels: map[string]string{"app": "web"},
			Annotations: map[string]string{
				v1alpha1.PodInterceptorsAnnotation:                 "surge.example.com",
				corev1.MirrorPodAnnotationKey:                      "hash",
				"kubectl.kubernetes.io/last-applied-configuration": `{"a":"large document"}`,
			},
			OwnerReferences: []metav1.OwnerReference{
				{APIVersion: "v1", Kind: "ConfigMap", Name: "not-the-controller", UID: "uid-2"},
				{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "agent", UID: "uid-3", Controller: ptr.To(true)},
			},
			Finalizers:    []string{"example.com/hold"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}},
		},
		Spec: corev1.PodSpec{
			NodeName:   "node-1",
			Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10", Env: []corev1.EnvVar{{Name: "A", Value: "1"}}}},
			InitContainers: []corev1.Container{
				{Name: "setup", Image: "registry.k8s.io/pause:3.10"},
				{Name: "proxy", Image: "registry.k8s.io/pause:3.10", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)},
			},
			Volumes: []corev1.Volume{
				{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "web"}}}},
				{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}},
			},
			EvictionResponders: []corev1.EvictionResponder{{Name: "surge.example.com/responder", Priority: ptr.To[int32](100)}},
			SchedulingGroup:    &corev1.PodSchedulingGroup{PodGroupName: ptr.To("training")},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodFailed, Reason: "Terminated", Message: "Pod was terminated in response to imminent node shutdown.",
			PodIP:      "10.0.0.1",
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}},
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "app", Image: "registry.k8s.io/pause:3.10", RestartCount: 2,
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 143, FinishedAt: metav1.NewTime(now.Add(time.Second)), Message: "bye"}},
			}},
			InitContainerStatuses: []corev1.ContainerStatus{
				{Name: "setup", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: now}}},
				{Name: "proxy", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, FinishedAt: metav1.NewTime(now.Add(2 * time.Second))}}},
			},
		},
	}
}

func TestTrimPodKeepsWhatTheServerReads(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	want := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-0", Namespace: "shop", UID: "uid-1", ResourceVersion: "42",
			CreationTimestamp: now, DeletionTimestamp: &now,
			Labels: map[string]string{"app": "web"},
			Annotations: map[string]string{
				v1alpha1.PodInterceptorsAnnotation: "surge.example.com",
				corev1.MirrorPodAnnotationKey:      "hash",
			},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "agent", UID: "uid-3", Controller: ptr.To(true)}},
		},
		Spec: corev1.PodSpec{
			NodeName:           "node-1",
			InitContainers:     []corev1.Container{{Name: "proxy", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)}},
			Volumes:            []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
			EvictionResponders: []corev1.EvictionResponder{{Name: "surge.example.com/responder", Priority: ptr.To[int32](100)}},
			SchedulingGroup:    &corev1.PodSchedulingGroup{PodGroupName: ptr.To("training")},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodFailed, Reason: "Terminated", Message: "Pod was terminated in response to imminent node shutdown.",
			ContainerStatuses: []corev1.ContainerStatus{
				{Name: "app", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.NewTime(now.Add(time.Second))}}},
			},
			InitContainerStatuses: []corev1.ContainerStatus{
				{Name: "setup", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: now}}},
				{Name: "proxy", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.NewTime(now.Add(2 * time.Second))}}},
			},
		},
	}
	trim := TrimPodKeeping(v1alpha1.PodInterceptorsAnnotation, corev1.MirrorPodAnnotationKey)
	got, err := trim(fullPod())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("trimmed pod (-want +got):\n%s", diff)
	}
	// Trimming twice, as an informer may on a relist, changes nothing.
	again, err := trim(got)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, again); diff != "" {
		t.Errorf("trimmed again (-want +got):\n%s", diff)
	}
}

// TestTrimmedPodsAnswerThePodRulesAsWhole asks every rule of
// pkg/api/v1/pod, pkg/drain and the lifecycle helpers that reads a cached
// pod about a pod trimmed keeping only the annotations the rule declares:
// each answer must be the whole pod's.
func TestTrimmedPodsAnswerThePodRulesAsWhole(t *testing.T) {
	running := fullPod()
	running.DeletionTimestamp = nil
	running.Status.Phase, running.Status.Reason, running.Status.Message = corev1.PodRunning, "", ""
	running.Status.ContainerStatuses[0].State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	bare := fullPod()
	bare.Spec.Volumes, bare.OwnerReferences, bare.Annotations, bare.Spec.EvictionResponders, bare.Spec.SchedulingGroup = nil, nil, nil, nil, nil
	descheduled := fullPod()
	descheduled.Annotations = map[string]string{podutil.RequestEvictOnlyAnnotation: "", podutil.EvictionInProgressAnnotation: "", "other": "x"}
	for name, pod := range map[string]*corev1.Pod{"ended": fullPod(), "running": running, "bare": bare, "descheduled": descheduled} {
		for name2, r := range podRules {
			got, err := TrimPodKeeping(r.annotations...)(pod)
			if err != nil {
				t.Fatal(err)
			}
			if whole, part := r.answer(pod), r.answer(got.(*corev1.Pod)); whole != part {
				t.Errorf("%s pod: %s of the trimmed pod is %v, of the whole pod %v", name, name2, part, whole)
			}
		}
	}
}

func TestTrimPodKeepsOnlyTheAnnotationsNamed(t *testing.T) {
	got, err := TrimPodKeeping(corev1.MirrorPodAnnotationKey, "absent")(fullPod())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{corev1.MirrorPodAnnotationKey: "hash"}
	if diff := cmp.Diff(want, got.(*corev1.Pod).Annotations); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	// Readers that share a helper declare its annotations each: a pod of
	// as many annotations as the names given keeps only those named.
	pod := fullPod()
	pod.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "hash", "other": "x"}
	got, err = TrimPodKeeping(corev1.MirrorPodAnnotationKey, corev1.MirrorPodAnnotationKey)(pod)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got.(*corev1.Pod).Annotations); diff != "" {
		t.Errorf("annotations named twice (-want +got):\n%s", diff)
	}
	got, err = TrimPodKeeping()(fullPod())
	if err != nil {
		t.Fatal(err)
	}
	if a := got.(*corev1.Pod).Annotations; a != nil {
		t.Errorf("annotations %v kept, none named", a)
	}
}

func TestTrimPodWithoutAnnotationsOrOwner(t *testing.T) {
	pod := fullPod()
	pod.Annotations = map[string]string{"other": "value"}
	pod.OwnerReferences = pod.OwnerReferences[:1]
	trim := TrimPodKeeping(v1alpha1.PodInterceptorsAnnotation)
	got, err := trim(pod)
	if err != nil {
		t.Fatal(err)
	}
	trimmed := got.(*corev1.Pod)
	if trimmed.Annotations != nil || trimmed.OwnerReferences != nil {
		t.Errorf("annotations %v and owners %v kept; want none", trimmed.Annotations, trimmed.OwnerReferences)
	}
	tombstone := cache.DeletedFinalStateUnknown{Key: "shop/web-0", Obj: pod}
	if got, err := trim(tombstone); err != nil || got != any(tombstone) {
		t.Errorf("a tombstone came back as %v, %v; want it unchanged", got, err)
	}
}

func TestTheFactorysTransformTrimsPodsAndStripsOthers(t *testing.T) {
	annotations := []string{v1alpha1.PodInterceptorsAnnotation}
	transform := TrimPodsStripManagedFieldsBut(annotations, "kept-manager")
	factory := informers.NewSharedInformerFactoryWithOptions(fake.NewClientset(fullPod()), 0, informers.WithTransform(transform)) //nolint:forbidigo // the factory's transform under test
	lister := factory.Core().V1().Pods().Lister()
	ctx, cancel := context.WithCancel(t.Context())
	// Shutdown waits for the informers, which stop once ctx is done.
	defer factory.Shutdown()
	defer cancel()
	factory.Start(ctx.Done())
	for informer, synced := range factory.WaitForCacheSync(ctx.Done()) {
		if !synced {
			t.Fatalf("%v did not sync", informer)
		}
	}
	var cached *corev1.Pod
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		var err error
		cached, err = lister.Pods("shop").Get("web-0")
		return err == nil, nil
	}); err != nil {
		t.Fatalf("the pod never reached the cache: %v", err)
	}
	want, _ := TrimPodKeeping(annotations...)(fullPod())
	if diff := cmp.Diff(want, cached); diff != "" {
		t.Errorf("cached pod (-trimmed +cached):\n%s", diff)
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}, {Manager: "kept-manager"}}}}
	got, err := transform(node)
	if err != nil {
		t.Fatal(err)
	}
	if kept := got.(*corev1.Node).ManagedFields; len(kept) != 1 || kept[0].Manager != "kept-manager" {
		t.Errorf("a node's managedFields %v; want kept-manager's only", kept)
	}
}

// podRules are the answers the readers of the pod caches take from a
// cached pod, each as a comparable value.
var podRules = map[string]struct {
	annotations []string
	answer      func(*corev1.Pod) any
}{
	"IsTerminal":      {nil, func(p *corev1.Pod) any { return podutil.IsTerminal(p) }},
	"IsTerminating":   {nil, func(p *corev1.Pod) any { return podutil.IsTerminating(p) }},
	"TerminalTime":    {nil, func(p *corev1.Pod) any { return podutil.TerminalTime(p).String() }},
	"IsMirror":        {podutil.EvictabilityAnnotations, func(p *corev1.Pod) any { return podutil.IsMirror(p) }},
	"IsDaemonSetPod":  {nil, func(p *corev1.Pod) any { return podutil.IsDaemonSetPod(p) }},
	"WhyNotEvictable": {podutil.EvictabilityAnnotations, func(p *corev1.Pod) any { return podutil.WhyNotEvictable(p) }},
	"RequestsEvictOnly": {podutil.DeschedulerAnnotations, func(p *corev1.Pod) any {
		_, ok := p.Annotations[podutil.RequestEvictOnlyAnnotation]
		return ok
	}},
	"EvictionInProgress": {podutil.DeschedulerAnnotations, func(p *corev1.Pod) any {
		_, ok := p.Annotations[podutil.EvictionInProgressAnnotation]
		return ok
	}},
	"drain.Policy.Refuse": {drain.PodAnnotationsRead, func(p *corev1.Pod) any { return drain.Policy{}.Refuse(p) }},
	"drain.Policy.Overridden": {drain.PodAnnotationsRead, func(p *corev1.Pod) any {
		return fmt.Sprint(drain.Policy{Force: true, DeleteEmptyDirData: true}.Overridden(p))
	}},
	"PodResponders":        {nil, func(p *corev1.Pod) any { return asJSON(lifecycleutil.PodResponders(p)) }},
	"DeclaresParticipants": {nil, func(p *corev1.Pod) any { return evictionapi.Lifecycle.DeclaresParticipants(p) }},
	"DeclaresInterceptors": {evictionapi.ParticipantAnnotations, func(p *corev1.Pod) any { return evictionapi.Coordination.DeclaresParticipants(p) }},
	"SchedulingGroup":      {nil, func(p *corev1.Pod) any { return p.Spec.SchedulingGroup == nil }},
}

// asJSON compares values that hold pointers by what they point to.
func asJSON(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(data)
}
