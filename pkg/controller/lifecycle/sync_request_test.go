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

package lifecycle

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
)

func (f *fixture) syncRequest(name string) *lifecyclev1alpha1.EvictionRequest {
	f.t.Helper()
	if _, err := f.controller.syncRequest(f.ctx, "shop/"+name); err != nil {
		f.t.Fatalf("syncRequest: %v", err)
	}
	er := f.request(name)
	f.cache(er)
	return er
}

func (f *fixture) evictionNames() []string {
	f.t.Helper()
	list, err := f.kube.LifecycleV1alpha1().Evictions("shop").List(f.ctx, metav1.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	var names []string
	for _, ev := range list.Items {
		names = append(names, ev.Name)
	}
	return names
}

func TestARequestCreatesTheEvictionOfItsPod(t *testing.T) {
	pod := wrappers.MakePod("web").Obj()
	f := newFixture(t, pod, wrappers.MakeLifecycleRequest("r1", pod, requester).Obj())
	er := f.syncRequest("r1")

	ev := f.eviction("pod-1-web")
	if got := ev.Spec.Target.Pod; got == nil || got.Name != "web" || got.UID != pod.UID {
		t.Errorf("target = %+v, want pod web with its UID", got)
	}
	// Every participant's label and every request's ownership at once: the
	// metadata sync has nothing left to write.
	if diff := cmp.Diff(map[string]string{requester: "requester", evictor: "responder"}, ev.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if len(ev.OwnerReferences) != 1 || ev.OwnerReferences[0].Kind != "EvictionRequest" || ev.OwnerReferences[0].UID != er.UID {
		t.Errorf("owners = %+v, want the request", ev.OwnerReferences)
	}
	f.cache(ev)
	writes := len(f.kube.Actions())
	if _, err := f.controller.syncMetadata(f.ctx, "shop/pod-1-web"); err != nil {
		t.Fatal(err)
	}
	if got := f.kube.Actions()[writes:]; len(got) != 0 {
		t.Errorf("the metadata sync of a new Eviction wrote %v", got)
	}
	// The request is written once, when its Eviction reports.
	if er.Status.ObservedGeneration != nil {
		t.Errorf("the request's status was written with the creation of its Eviction: %+v", er.Status)
	}
	if got := f.events(); len(got) != 0 {
		t.Errorf("the creation of the Eviction recorded %v, want no event: its owner references say it", got)
	}

	er = f.syncRequest("r1")
	if diff := cmp.Diff([]string{"pod-1-web"}, f.evictionNames()); diff != "" {
		t.Errorf("a second sync changed the Evictions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(awaitingConditions, conditionsOf(er.Status.Conditions)); diff != "" {
		t.Errorf("conditions of the request (-want +got):\n%s", diff)
	}
}

// An Eviction that failed, canceled or with every responder's turn over
// and the pod still there (upstream's "fails eviction, but recovers with a
// new eviction"), is followed by the next one while a request still wants
// the eviction; the request is not finished by it.
func TestAFailedEvictionIsFollowedByANewOneWhileARequestWantsIt(t *testing.T) {
	for _, reason := range []lifecyclev1alpha1.EvictionConditionReason{
		lifecyclev1alpha1.EvictionConditionReasonCanceledDueToNoRequesters,
		lifecyclev1alpha1.EvictionConditionReasonNoFurtherResponder,
	} {
		t.Run(string(reason), func(t *testing.T) {
			pod := wrappers.MakePod("web").Obj()
			failed := wrappers.MakeEviction("pod-1-web", pod).
				Condition(lifecyclev1alpha1.EvictionConditionFailed, metav1.ConditionTrue, reason, start).
				Condition(lifecyclev1alpha1.EvictionConditionTargetEvicted, metav1.ConditionFalse, lifecyclev1alpha1.EvictionConditionReasonEvictionFailed, start).Obj()
			want := []string{"Failed=True/" + string(reason), "TargetEvicted=False/EvictionFailed"}
			reported := wrappers.MakeLifecycleRequest("r1", pod, requester).Obj()
			reported.Status.Conditions = failed.Status.Conditions
			if lifecycleutil.IsRequestFinished(reported) {
				t.Errorf("a request reporting %s is finished; it must stay open for the next Eviction", reason)
			}
			f := newFixture(t, pod, failed, reported)
			f.syncRequest("r1")
			if diff := cmp.Diff([]string{"pod-1-web", "pod-2-web"}, f.evictionNames()); diff != "" {
				t.Errorf("Evictions (-want +got):\n%s", diff)
			}

			f = newFixture(t, pod, failed, wrappers.MakeLifecycleRequest("r1", pod, requester).Withdrawn().Obj())
			er := f.syncRequest("r1")
			if diff := cmp.Diff([]string{"pod-1-web"}, f.evictionNames()); diff != "" {
				t.Errorf("a withdrawn request created an Eviction (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(want, conditionsOf(er.Status.Conditions)); diff != "" {
				t.Errorf("the request does not report the failed Eviction (-want +got):\n%s", diff)
			}
		})
	}
}

func TestARequestReportsItsEvictionsConditions(t *testing.T) {
	pod := wrappers.MakePod("web").Obj()
	ev := wrappers.MakeEviction("pod-1-web", pod).
		Condition(lifecyclev1alpha1.EvictionConditionFailed, metav1.ConditionFalse, lifecyclev1alpha1.EvictionConditionReasonSucceeded, start).
		Condition(lifecyclev1alpha1.EvictionConditionTargetEvicted, metav1.ConditionTrue, lifecyclev1alpha1.EvictionConditionReasonPodDeleted, start).Obj()
	f := newFixture(t, ev, wrappers.MakeLifecycleRequest("r1", pod, requester).Obj())
	er := f.syncRequest("r1")
	if diff := cmp.Diff([]string{"Failed=False/Succeeded", "TargetEvicted=True/PodDeleted"}, conditionsOf(er.Status.Conditions)); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
	if !lifecycleutil.IsRequestFinished(er) {
		t.Error("the request of an evicted pod is not finished")
	}
	if got := er.Status.ObservedGeneration; got == nil || *got != er.Generation {
		t.Errorf("observedGeneration = %v, want %d", got, er.Generation)
	}
}

func TestInvalidRequests(t *testing.T) {
	pod := wrappers.MakePod("web").Obj()
	grouped := wrappers.MakePod("grouped").Obj()
	grouped.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{}
	for name, tc := range map[string]struct {
		pod     *corev1.Pod
		request *lifecyclev1alpha1.EvictionRequest
		message string
	}{
		"a pod that does not exist": {
			request: wrappers.MakeLifecycleRequest("r1", pod, requester).Obj(),
			message: MessagePodNotFound,
		},
		"a pod of the name with another UID": {
			pod:     wrappers.MakePod("web").UID("uid-other").Obj(),
			request: wrappers.MakeLifecycleRequest("r1", pod, requester).Obj(),
			message: "Target pod UID mismatch: expected uid-web, got uid-other.",
		},
		"a pod in a scheduling group": {
			pod:     grouped,
			request: wrappers.MakeLifecycleRequest("r1", grouped, requester).Obj(),
			message: MessageSchedulingGroup,
		},
	} {
		t.Run(name, func(t *testing.T) {
			objects := []runtime.Object{tc.request}
			if tc.pod != nil {
				objects = append(objects, tc.pod)
			}
			f := newFixture(t, objects...)
			er := f.syncRequest("r1")
			if diff := cmp.Diff([]string{"Failed=True/EvictionInvalid", "TargetEvicted=False/EvictionFailed"}, conditionsOf(er.Status.Conditions)); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
			if got := lifecycleutil.Condition(er.Status.Conditions, lifecyclev1alpha1.EvictionConditionFailed).Message; got != tc.message {
				t.Errorf("message = %q, want %q", got, tc.message)
			}
			if names := f.evictionNames(); len(names) > 0 {
				t.Errorf("an invalid request created %v", names)
			}
			if diff := cmp.Diff([]string{"Warning EvictionInvalid"}, f.events()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}

			// The outcome is final, but a change of the spec is observed.
			er.Spec.Intent = lifecyclev1alpha1.EvictionRequestIntentWithdrawn
			er.Generation = 2
			f.update(er)
			f.clock.Step(time.Minute)
			after := f.syncRequest("r1")
			if got := after.Status.ObservedGeneration; got == nil || *got != 2 {
				t.Errorf("observedGeneration after the spec changed = %v, want 2", got)
			}
			if diff := cmp.Diff(er.Status.Conditions, after.Status.Conditions); diff != "" {
				t.Errorf("the final conditions changed (-before +after):\n%s", diff)
			}
		})
	}
}

func TestAPodMissingFromTheCacheIsReadLive(t *testing.T) {
	pod := wrappers.MakePod("web").Obj()
	f := newFixture(t, wrappers.MakeLifecycleRequest("r1", pod, requester).Obj())
	if err := f.kube.Tracker().Add(pod); err != nil {
		t.Fatal(err)
	}
	er := f.syncRequest("r1")
	if lifecycleutil.IsRequestFinished(er) {
		t.Errorf("the request of a pod the cache had not seen yet is %v", conditionsOf(er.Status.Conditions))
	}
	if diff := cmp.Diff([]string{"pod-1-web"}, f.evictionNames()); diff != "" {
		t.Errorf("Evictions (-want +got):\n%s", diff)
	}
}

// The informer can deliver an Eviction of the pod while a sync waits on
// kube-apiserver (here the live read of a pod the cache has not seen; in a
// fault campaign, a replica thawed with its watches behind): the sync must
// not name a second Eviction after the one it did not see when it decided.
func TestAnEvictionCachedDuringTheSyncIsNotDuplicated(t *testing.T) {
	pod := wrappers.MakePod("web").Obj()
	f := newFixture(t, wrappers.MakeLifecycleRequest("r1", pod, requester).Obj())
	if err := f.kube.Tracker().Add(pod); err != nil {
		t.Fatal(err)
	}
	// The Eviction delivered late has reported: the request reports it at
	// once, as no Eviction created by this sync will wake it.
	delivered := wrappers.MakeEviction("pod-1-web", pod).
		Condition(lifecyclev1alpha1.EvictionConditionFailed, metav1.ConditionFalse, lifecyclev1alpha1.EvictionConditionReasonAwaitingEviction, start).
		Condition(lifecyclev1alpha1.EvictionConditionTargetEvicted, metav1.ConditionFalse, lifecyclev1alpha1.EvictionConditionReasonAwaitingEviction, start).Obj()
	var once sync.Once
	f.kube.PrependReactor("get", "pods", func(clienttesting.Action) (bool, runtime.Object, error) {
		once.Do(func() { f.add(delivered) })
		return false, nil, nil
	})
	er := f.syncRequest("r1")
	if diff := cmp.Diff([]string{"pod-1-web"}, f.evictionNames()); diff != "" {
		t.Errorf("Evictions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(conditionsOf(delivered.Status.Conditions), conditionsOf(er.Status.Conditions)); diff != "" {
		t.Errorf("the request does not report the Eviction (-want +got):\n%s", diff)
	}
}

func TestMetadataNamesEveryParticipantAndEveryRequestOwnsTheEviction(t *testing.T) {
	pod := wrappers.MakePod("web").Responders(wrappers.Responder("acme.io/surge", 10000), wrappers.Responder(requester, 2000)).Obj()
	r1 := wrappers.MakeLifecycleRequest("r1", pod, requester).Obj()
	r2 := wrappers.MakeLifecycleRequest("r2", pod, "acme.io/autoscaler").Obj()
	deleting := wrappers.MakeLifecycleRequest("r3", pod, "acme.io/leaving").Deleting(start).Obj()
	old := wrappers.MakeLifecycleRequest("r4", pod, "acme.io/old").Obj()
	f := newFixture(t, pod, wrappers.MakeEviction("pod-1-web", pod).Obj(), r1, old)
	f.syncMetadata("pod-1-web")
	if err := f.requests.Delete(old); err != nil {
		t.Fatal(err)
	}
	f.add(r2)
	f.add(deleting)
	got := f.syncMetadata("pod-1-web")

	want := map[string]string{
		requester: "requester-responder", "acme.io/autoscaler": "requester", "acme.io/leaving": "requester",
		"acme.io/surge": "responder", evictor: "responder",
	}
	if diff := cmp.Diff(want, got.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	var owners []string
	for _, ref := range got.OwnerReferences {
		owners = append(owners, ref.Name)
	}
	// The reference to a request that is gone is the garbage collector's
	// to remove; one being deleted gets none.
	if diff := cmp.Diff([]string{"r1", "r4", "r2"}, owners); diff != "" {
		t.Errorf("owners (-want +got):\n%s", diff)
	}
}

func TestMetadataKeepsTheRespondersOfAPodThatIsGone(t *testing.T) {
	pod := wrappers.MakePod("web").Responders(wrappers.Responder("acme.io/surge", 10000)).Obj()
	f := newFixture(t, pod, wrappers.MakeEviction("pod-1-web", pod).Obj(), wrappers.MakeLifecycleRequest("r1", pod, requester).Obj())
	f.syncMetadata("pod-1-web")
	if err := f.pods.Delete(pod); err != nil {
		t.Fatal(err)
	}
	got := f.syncMetadata("pod-1-web")
	want := map[string]string{requester: "requester", "acme.io/surge": "responder", evictor: "responder"}
	if diff := cmp.Diff(want, got.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
}

// An Eviction whose owning requests are all being deleted is garbage: its
// labels are left as they are, not rewritten before the collector removes
// it. While one of its requests stays, they are kept up to date.
func TestMetadataLeavesAnEvictionWhoseRequestsAreGoing(t *testing.T) {
	pod := wrappers.MakePod("web").Obj()
	ev := wrappers.MakeEviction("pod-1-web", pod).Label(requester, "requester").Label(evictor, "responder").Obj()
	ev.OwnerReferences = []metav1.OwnerReference{{APIVersion: "lifecycle.k8s.io/v1alpha1", Kind: "EvictionRequest", Name: "r1", UID: "uid-r1"}}
	f := newFixture(t, ev, wrappers.MakeLifecycleRequest("r1", pod, requester).Deleting(start).Obj())
	writes := len(f.kube.Actions())
	if got := f.syncMetadata("pod-1-web"); len(f.kube.Actions()) != writes+1 || got.Labels[requester] != "requester" {
		t.Errorf("the metadata of an Eviction whose requests are going was written: %v, labels %v", f.kube.Actions()[writes:], got.Labels)
	}

	f = newFixture(t, ev, wrappers.MakeLifecycleRequest("r1", pod, requester).Deleting(start).Obj(),
		wrappers.MakeLifecycleRequest("r2", pod, "acme.io/other").Obj())
	if got := f.syncMetadata("pod-1-web"); got.Labels["acme.io/other"] != "requester" {
		t.Errorf("labels %v, want the remaining requester's", got.Labels)
	}
}

func (f *fixture) syncMetadata(name string) *lifecyclev1alpha1.Eviction {
	f.t.Helper()
	if _, err := f.controller.syncMetadata(f.ctx, "shop/"+name); err != nil {
		f.t.Fatalf("syncMetadata: %v", err)
	}
	ev := f.eviction(name)
	f.cache(ev)
	return ev
}

func TestEvictionNames(t *testing.T) {
	long := strings.Repeat("a", 250)
	for name, tc := range map[string]struct {
		pod      string
		existing []string
		want     string
	}{
		"first":                        {pod: "web", want: "pod-1-web"},
		"after the highest of the pod": {pod: "web", existing: []string{"pod-1-web", "pod-3-web", "pod-9-webber", "other"}, want: "pod-4-web"},
		"cut at the length limit":      {pod: long, want: ("pod-1-" + long)[:253]},
		"a cut name shares a counter":  {pod: long + "b", existing: []string{("pod-1-" + long)[:253]}, want: ("pod-2-" + long)[:253]},
	} {
		t.Run(name, func(t *testing.T) {
			var existing []*lifecyclev1alpha1.Eviction
			for _, n := range tc.existing {
				existing = append(existing, &lifecyclev1alpha1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: n}})
			}
			if got := newEvictionName(tc.pod, existing); got != tc.want {
				t.Errorf("newEvictionName() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestADeadlineShorterThanKubeAPIServersIsRefused(t *testing.T) {
	if err := ValidateDeadline(19 * time.Minute); err == nil {
		t.Error("a 19m deadline was accepted")
	}
	if err := ValidateDeadline(time.Hour); err != nil {
		t.Errorf("a 1h deadline was refused: %v", err)
	}
}
