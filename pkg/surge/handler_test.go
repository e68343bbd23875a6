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
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/sdk/interceptor"
)

// webDeployment is the one-replica Deployment web, its ReplicaSet and its
// pod web-0, Ready for an hour.
func webDeployment() (*appsv1.Deployment, *appsv1.ReplicaSet, *corev1.Pod) {
	dep := wrappers.MakeDeployment("web").Obj()
	rs := wrappers.MakeReplicaSet("web-abc", 1).OwnedBy(dep).Obj()
	pod := wrappers.MakePod("web-0").Label("app", "web").OwnedByReplicaSet(rs).Node("node-a").Ready(start.Add(-time.Hour)).Obj()
	return dep, rs, pod
}

// surging is dep with a surge of interceptor replacing pods.
func surging(t *testing.T, dep *appsv1.Deployment, interceptor string, pods ...*corev1.Pod) *appsv1.Deployment {
	t.Helper()
	state := &State{Interceptor: interceptor, OriginalReplicas: 1, Available: 1, Pods: map[types.UID]string{}}
	for _, pod := range pods {
		state.Pods[pod.UID] = pod.Name
	}
	surged, err := applyState(dep, state)
	if err != nil {
		t.Fatal(err)
	}
	return surged
}

// markedBy is pod with the lowest deletion cost, marked by interceptor.
func markedBy(pod *corev1.Pod, interceptor string) *corev1.Pod {
	pod = pod.DeepCopy()
	pod.Annotations = map[string]string{DeletionCostAnnotation: lowestDeletionCost, OriginalDeletionCostAnnotation: "7", MarkedByAnnotation: interceptor}
	return pod
}

func expectRequeue(t *testing.T, result interceptor.Result) {
	t.Helper()
	if result.Outcome != 0 || result.RequeueAfter != poll {
		t.Errorf("Handle() = %+v, want to be called again after %s", result, poll)
	}
}

func expectReport(t *testing.T, got interceptor.Progress, mentions string, policy v1alpha1.EvictionRequestCancellationPolicy) {
	t.Helper()
	if !strings.Contains(got.Message, mentions) || got.CancellationPolicy != policy {
		t.Errorf("reported %q under %s, want a message with %q under %s", got.Message, got.CancellationPolicy, mentions, policy)
	}
}

// fieldManagers lists the field managers of the writes to resource.
func fieldManagers(actions []clienttesting.Action, resource string) []string {
	var managers []string
	for _, a := range actions {
		if a.GetResource().Resource != resource {
			continue
		}
		switch a := a.(type) {
		case clienttesting.UpdateActionImpl:
			managers = append(managers, a.UpdateOptions.FieldManager)
		case clienttesting.PatchActionImpl:
			managers = append(managers, a.PatchOptions.FieldManager)
		}
	}
	return managers
}

// A one-replica Deployment's pod is replaced through a surge, one call of
// Handle per step: the surge, the wait for the replacement, the scale-back,
// the wait for the ReplicaSet, the removal.
func TestHandleReplacesThePodThroughASurge(t *testing.T) {
	f := newFixture(t)
	dep, rs, pod := webDeployment()
	f.add(dep, rs, pod)

	result, recorder := f.handle(pod)
	expectRequeue(t, result)
	expectReport(t, recorder.Last(), "Surging Deployment web to 2 replicas to replace pod web-0", v1alpha1.Allow)
	if state, _ := currentState(f.deployment("web")); state == nil || state.Pods[pod.UID] != "web-0" || *f.deployment("web").Spec.Replicas != 2 {
		t.Fatalf("after the first call: %d replicas, surge %+v", *f.deployment("web").Spec.Replicas, state)
	}
	if diff := cmp.Diff([]string{EventSurgeStarted}, f.events()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	// The Deployment controller scales the ReplicaSet up; its new pod is
	// not Ready yet.
	f.refresh()
	rs.Spec.Replicas, rs.Status.Replicas = ptr.To[int32](2), 2
	replacement := wrappers.MakePod("web-1").Label("app", "web").OwnedByReplicaSet(rs).Phase(corev1.PodPending).Created(start).Obj()
	f.cache(rs)
	f.add(replacement)
	result, recorder = f.handle(pod)
	expectRequeue(t, result)
	expectReport(t, recorder.Last(), "pod web-1 is not Ready", v1alpha1.Allow)

	// The replacement is available: the pod is marked, the Deployment
	// scaled back.
	f.cache(wrappers.MakePod("web-1").Label("app", "web").OwnedByReplicaSet(rs).Node("node-b").Ready(start).Obj())
	result, recorder = f.handle(pod)
	expectRequeue(t, result)
	expectReport(t, recorder.Last(), "Replacements of pod web-0 are available; scaling Deployment web back to 1", v1alpha1.Forbid)
	if got := f.deployment("web"); *got.Spec.Replicas != 1 || got.Annotations[StateAnnotation] != "" {
		t.Errorf("after the scale-back: %d replicas, surge %q", *got.Spec.Replicas, got.Annotations[StateAnnotation])
	}
	if diff := cmp.Diff(map[string]string{DeletionCostAnnotation: lowestDeletionCost, OriginalDeletionCostAnnotation: "", MarkedByAnnotation: ours}, f.pod("web-0").Annotations); diff != "" {
		t.Errorf("annotations of the pod (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{EventSurgeScaledDown}, f.events()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	// The interceptor writes as itself, whatever its name.
	for _, resource := range []string{"deployments", "pods"} {
		for _, manager := range fieldManagers(f.kube.Actions(), resource) {
			if manager != ours {
				t.Errorf("a write of %s as field manager %q, want %q", resource, manager, ours)
			}
		}
	}

	// The ReplicaSet has not removed the pod yet: the request is kept.
	f.refresh()
	result, recorder = f.handle(f.pod("web-0"))
	expectRequeue(t, result)
	expectReport(t, recorder.Last(), "waiting for ReplicaSet web-abc to remove pod web-0", v1alpha1.Forbid)

	// It does.
	f.cache(wrappers.MakePod("web-0").Label("app", "web").OwnedByReplicaSet(rs).Terminating(start).Annotation(OriginalDeletionCostAnnotation, "").Obj())
	if result, _ := f.handle(pod); result.Outcome != interceptor.PodTerminated {
		t.Errorf("Handle() of a pod being removed = %+v, want PodTerminated", result)
	}
}

// A surge of a Deployment whose spec.replicas is unset (the API's default is
// one) is applied again, without dereferencing the missing count.
func TestHandleReappliesASurgeOfADeploymentWithoutReplicas(t *testing.T) {
	f := newFixture(t)
	dep, rs, pod := webDeployment()
	dep = surging(t, dep, ours, pod)
	dep.Spec.Replicas = nil
	f.add(dep, rs, pod)
	result, _ := f.handle(pod)
	expectRequeue(t, result)
	if got := f.deployment("web").Spec.Replicas; got == nil || *got != 2 {
		t.Errorf("replicas after the surge was applied again: %v, want 2", got)
	}
}

// After a scale-back the Deployment's cache may show the surge over while
// the pod's cache does not show its mark yet: the pod is read from the API
// server before a surge, and never surged twice.
func TestHandleNeverSurgesAPodTwiceWhenTheCacheLags(t *testing.T) {
	f := newFixture(t)
	dep, rs, pod := webDeployment()
	f.add(dep, rs, pod)
	if err := f.kube.Tracker().Update(corev1.SchemeGroupVersion.WithResource("pods"), markedBy(pod, ours), pod.Namespace); err != nil {
		t.Fatal(err)
	}
	result, _ := f.handle(pod)
	expectRequeue(t, result)
	if got := f.deployment("web"); *got.Spec.Replicas != 1 || got.Annotations[StateAnnotation] != "" {
		t.Errorf("a pod scaled back already was surged again: %d replicas, surge %q", *got.Spec.Replicas, got.Annotations[StateAnnotation])
	}
	if events := f.events(); len(events) != 0 {
		t.Errorf("events %v", events)
	}
}

// A ReplicaSet that settled at the Deployment's count and kept the marked
// pod removed another one: the pod's cost is restored and the scale-back
// counted on it, and the next calls surge again; after three such
// scale-backs the request is passed on.
func TestHandleSurgesAgainWhenTheReplicaSetKeptThePod(t *testing.T) {
	f := newFixture(t)
	dep, rs, pod := webDeployment()
	kept := markedBy(pod, ours)
	f.add(dep, rs, kept)
	result, recorder := f.handle(kept)
	expectRequeue(t, result)
	expectReport(t, recorder.Last(), "ReplicaSet web-abc kept pod web-0", v1alpha1.Allow)
	if diff := cmp.Diff(map[string]string{DeletionCostAnnotation: "7", ScaleBacksAnnotation: "1"}, f.pod("web-0").Annotations); diff != "" {
		t.Errorf("annotations of the kept pod (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{EventSurgeRetried}, f.events()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	keptTwice := markedBy(pod, ours)
	keptTwice.Annotations[ScaleBacksAnnotation] = "2"
	if err := f.kube.Tracker().Update(corev1.SchemeGroupVersion.WithResource("pods"), keptTwice, pod.Namespace); err != nil {
		t.Fatal(err)
	}
	f.cache(keptTwice)
	result, _ = f.handle(keptTwice)
	if result.Outcome != interceptor.Declined || !strings.Contains(result.Message, "kept pod web-0 after 3 scale-backs") {
		t.Errorf("Handle() after the third scale-back = %+v, want the request passed on", result)
	}
}

// A pod in the surge of another surge interceptor waits for that surge to
// end: two surges of one Deployment would count each other's replacements.
func TestHandleWaitsForTheSurgeOfAnotherInterceptor(t *testing.T) {
	f := newFixture(t)
	dep, rs, pod := webDeployment()
	f.add(surging(t, dep, theirs, pod), rs, pod)
	result, recorder := f.handle(pod)
	expectRequeue(t, result)
	expectReport(t, recorder.Last(), `Waiting for the surge of Deployment web by interceptor "surge-b.example.com" to end`, v1alpha1.Allow)
}

// A pod that no Deployment controls is passed on at once.
func TestHandlePassesOnAPodWithoutADeployment(t *testing.T) {
	f := newFixture(t)
	pod := wrappers.MakePod("bare").Obj()
	f.add(pod)
	if result, _ := f.handle(pod); result.Outcome != interceptor.Declined || !strings.Contains(result.Message, "not controlled by a Deployment") {
		t.Errorf("Handle() = %+v, want the request passed on", result)
	}
}
