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

package bridge

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
)

// runJanitor runs the fixture's janitor until the test ends.
func (f *fixture) runJanitor() {
	f.t.Helper()
	j, err := NewJanitor(f.bridge)
	if err != nil {
		f.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(f.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = j.Run(ctx)
	}()
	f.t.Cleanup(func() {
		cancel()
		<-done
	})
}

// heldForADrainer is a fixture whose janitor runs, and its pod, which a
// drainer's eviction asked the bridge to request and an interceptor holds.
func heldForADrainer(t *testing.T) (*fixture, *corev1.Pod) {
	t.Helper()
	pod := interceptedPod("db-0").Obj()
	f := newFixture(t, evictionapi.Coordination, pod)
	f.runJanitor()
	f.decide(pod, drainer, false)
	f.setActive(pod, "surge.example.com")
	return f, pod
}

// A caller that stops asking does not leave the pod to be evicted later:
// once no eviction reached the bridge for the inactivity time-out, it
// withdraws; a call before that keeps the request.
func TestTheJanitorWithdrawsWhenNobodyAsksAnyMore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, pod := heldForADrainer(t)

		time.Sleep(DefaultInactivity - time.Minute)
		f.decide(pod, drainer, false) // the caller asks again: the request stays
		time.Sleep(DefaultInactivity - time.Minute)
		if s := f.status(pod); !s.Requested {
			t.Fatalf("withdrawn %s after the last call, within the inactivity time-out", DefaultInactivity-time.Minute)
		}
		time.Sleep(withdrawalAge(DefaultInactivity) - DefaultInactivity + 2*time.Minute)
		if s := f.status(pod); s.Requested {
			t.Errorf("still a requester %s after the last call: %+v", withdrawalAge(DefaultInactivity)+time.Minute, s)
		}
	})
}

// A call the bridge did not record (it records one at most every
// unrecordedCalls) keeps the request for the whole inactivity time-out
// too: Karpenter, whose retries came a few seconds apart, lost its
// request 13 seconds after its last call with a time-out of 15.
func TestTheJanitorCountsFromACallItDidNotRecord(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, pod := heldForADrainer(t)
		recorded := f.status(pod).Annotations[LastCallAnnotation]

		time.Sleep(unrecordedCalls(DefaultInactivity) - time.Second)
		f.decide(pod, drainer, false) // the caller asks again, too soon to be recorded
		if s := f.status(pod); s.Annotations[LastCallAnnotation] != recorded {
			t.Fatalf("the bridge recorded a call %v after the last one it recorded, %s: %+v", unrecordedCalls(DefaultInactivity)-time.Second, recorded, s)
		}
		time.Sleep(DefaultInactivity - time.Second)
		if s := f.status(pod); !s.Requested {
			t.Fatalf("withdrawn %v after a call it did not record, within the inactivity time-out", DefaultInactivity-time.Second)
		}
		time.Sleep(2 * time.Second)
		if s := f.status(pod); s.Requested {
			t.Errorf("still a requester %v after the last call: %+v", DefaultInactivity+time.Second, s)
		}
	})
}

// The refusal of a known caller's call does not wait for the bridge to
// write the call down: on a loaded control plane that write outlasted
// kube-apiserver's webhook timeout, the webhook failed open and the pod was
// evicted. The call is written down all the same.
func TestARefusalDoesNotWaitForTheCallToBeWrittenDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, pod := heldForADrainer(t)
		recorded := f.status(pod).Annotations[LastCallAnnotation]
		time.Sleep(unrecordedCalls(DefaultInactivity) + time.Second)
		f.evr.PrependReactor("patch", "evictionrequests", func(clienttesting.Action) (bool, runtime.Object, error) {
			time.Sleep(time.Minute) // a write kube-apiserver answers late
			return false, nil, nil
		})
		asked := time.Now()
		if d := f.decide(pod, drainer, false); d.Allowed {
			t.Fatalf("the eviction of a held pod was allowed: %+v", d)
		}
		if waited := time.Since(asked); waited > 0 {
			t.Errorf("the refusal waited %s for the call to be written down", waited)
		}
		time.Sleep(time.Minute)
		if s := f.status(pod); s.Annotations[LastCallAnnotation] == recorded {
			t.Errorf("the call was not written down once the write went through: %+v", s)
		}
	})
}

// The descheduler does not call again after its background eviction: its
// pod's request stays however long it takes, and once the bridge no longer
// requests the eviction of a pod that stays, the mark goes.
func TestTheJanitorKeepsBackgroundEvictions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pod := interceptedPod("db-0").Annotation(RequestEvictOnlyAnnotation, "").Obj()
		f := newFixture(t, evictionapi.Coordination, pod)
		f.runJanitor()
		f.decide(pod, "system:serviceaccount:kube-system:descheduler", false)
		f.setActive(pod, "surge.example.com")
		time.Sleep(3 * DefaultInactivity)
		if s := f.status(pod); !s.Requested {
			t.Fatal("the background eviction was withdrawn")
		}
		if _, err := f.p.Withdraw(f.ctx, pod.Namespace, pod.UID); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if f.podAnnotated(pod, EvictionInProgressAnnotation) {
			t.Error("the pod stays marked eviction-in-progress after the bridge withdrew")
		}
	})
}

// A request of the bridge that does not say when an eviction last reached
// it (an older release wrote the annotation in a second write, which
// failed) is still withdrawn once no eviction reached it for the
// inactivity time-out, counted from what the server recorded: the bridge's
// last write of it, else its creation. A last call written in the future
// counts from the bridge's last write too: no one keeps the request for
// ever by writing a time.
func TestTheJanitorCountsFromWhatTheServerRecorded(t *testing.T) {
	future := time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC).Format(time.RFC3339)
	lifecycleName := func(pod *wrappers.PodWrapper) string {
		r, err := requester.NewLifecycle(LifecycleRequester, nil, requester.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return r.RequestName(pod.Obj().UID)
	}
	for _, tc := range []struct {
		name string
		api  evictionapi.API
		// request is the bridge's request of pod, at now.
		request func(pod *wrappers.PodWrapper, now time.Time) runtime.Object
	}{
		{"our API, created by the bridge without the annotation", evictionapi.Coordination, func(pod *wrappers.PodWrapper, now time.Time) runtime.Object {
			return wrappers.MakeEvictionRequest(pod.Obj(), CoordinationRequester).Created(now).Obj()
		}},
		{"our API, joined an hour after its creation without the annotation", evictionapi.Coordination, func(pod *wrappers.PodWrapper, now time.Time) runtime.Object {
			return wrappers.MakeEvictionRequest(pod.Obj(), "other.example.com", CoordinationRequester).Created(now.Add(-time.Hour)).
				AppliedBy("other.example.com", now.Add(-time.Hour)).AppliedBy(CoordinationRequester, now).Obj()
		}},
		{"our API, a last call in the future", evictionapi.Coordination, func(pod *wrappers.PodWrapper, now time.Time) runtime.Object {
			return wrappers.MakeEvictionRequest(pod.Obj(), CoordinationRequester).Created(now.Add(-time.Hour)).
				AppliedBy(CoordinationRequester, now).Annotation(LastCallAnnotation, future).Obj()
		}},
		{"lifecycle.k8s.io, created by the bridge without the annotation", evictionapi.Lifecycle, func(pod *wrappers.PodWrapper, now time.Time) runtime.Object {
			return wrappers.MakeLifecycleRequest(lifecycleName(pod), pod.Obj(), LifecycleRequester).Created(now).Obj()
		}},
		{"lifecycle.k8s.io, a last call in the future", evictionapi.Lifecycle, func(pod *wrappers.PodWrapper, now time.Time) runtime.Object {
			return wrappers.MakeLifecycleRequest(lifecycleName(pod), pod.Obj(), LifecycleRequester).Created(now.Add(-time.Hour)).
				AppliedBy(LifecycleRequester, now).Annotation(LastCallAnnotation, future).Obj()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				pod := protectedPod(tc.api)
				f := newFixture(t, tc.api, pod.Obj(), tc.request(pod, time.Now()))
				f.runJanitor()
				time.Sleep(DefaultInactivity - time.Minute)
				if s := f.status(pod.Obj()); !s.Requested {
					t.Fatalf("withdrawn %v after the bridge's last write, within the inactivity time-out", DefaultInactivity-time.Minute)
				}
				time.Sleep(withdrawalAge(DefaultInactivity) - DefaultInactivity + 2*time.Minute)
				if s := f.status(pod.Obj()); s.Requested {
					t.Errorf("still requested %v after the bridge's last write: %+v", withdrawalAge(DefaultInactivity)+time.Minute, s)
				}
			})
		})
	}
}

// The descheduler's mark goes once the bridge's request of a pod that
// stays completed without evicting it; a pod that terminates keeps it.
func TestTheJanitorUnmarksAPodWhoseRequestCompleted(t *testing.T) {
	for _, tc := range []struct {
		name        string
		terminating bool
		marked      bool
	}{
		{"the pod stays", false, false},
		{"the pod terminates", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				pod := interceptedPod("db-0").Annotation(RequestEvictOnlyAnnotation, "").Annotation(EvictionInProgressAnnotation, "")
				if tc.terminating {
					pod = pod.Terminating(time.Now())
				}
				request := wrappers.MakeEvictionRequest(pod.Obj(), CoordinationRequester).Created(time.Now()).
					Complete(v1alpha1.CompleteReasonCanceled, "canceled").Obj()
				f := newFixture(t, evictionapi.Coordination, pod.Obj(), request)
				f.runJanitor()
				synctest.Wait()
				if marked := f.podAnnotated(pod.Obj(), EvictionInProgressAnnotation); marked != tc.marked {
					t.Errorf("marked eviction-in-progress: %v, want %v", marked, tc.marked)
				}
			})
		})
	}
}

// A key whose pod was replaced by another of the same name (a StatefulSet's
// next pod) touches neither: the old pod's request completed, and the new
// pod keeps the descheduler's mark its own request in progress put there.
func TestTheJanitorLeavesAPodOfTheSameNameAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		old := interceptedPod("db-0").UID("old").Obj()
		pod := interceptedPod("db-0").UID("new").Annotation(RequestEvictOnlyAnnotation, "").Annotation(EvictionInProgressAnnotation, "").Obj()
		oldRequest := wrappers.MakeEvictionRequest(old, CoordinationRequester).Created(time.Now()).
			Complete(v1alpha1.CompleteReasonPodDeleted, "the pod is gone").Obj()
		request := wrappers.MakeEvictionRequest(pod, CoordinationRequester).Created(time.Now()).Obj()
		f := newFixture(t, evictionapi.Coordination, pod, oldRequest, request)
		f.runJanitor()
		synctest.Wait()
		if !f.podAnnotated(pod, EvictionInProgressAnnotation) {
			t.Error("the new pod lost its eviction-in-progress mark to the completion of the old pod's request")
		}
	})
}

// A withdrawal the interceptor forbids (its removal of the pod in flight)
// is tried again an inactivity time-out later, not only at the request's
// next change.
func TestTheJanitorLooksAgainAtAForbiddenWithdrawal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pod := interceptedPod("db-0").Obj()
		request := wrappers.MakeEvictionRequest(pod, CoordinationRequester).Created(time.Now().Add(-2 * DefaultInactivity)).
			Policy(v1alpha1.Forbid).Obj()
		f := newFixture(t, evictionapi.Coordination, pod, request)
		j, err := NewJanitor(f.bridge)
		if err != nil {
			t.Fatal(err)
		}
		defer j.Close(f.ctx)
		after, err := j.sync(f.ctx, pod.Namespace+"/"+pod.Name+"/"+string(pod.UID))
		if err != nil || after != DefaultInactivity {
			t.Errorf("sync of a forbidden withdrawal = %v, %v; want to look again after %v", after, err, DefaultInactivity)
		}
		if s := f.status(pod); !s.Requested {
			t.Error("withdrawn although the interceptor forbids it")
		}
	})
}
