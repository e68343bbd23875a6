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
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
)

const drainer = "system:serviceaccount:kube-system:node-drainer"

// A pod that declares no interceptor is evicted as without the bridge: it
// passes, and nothing is written.
func TestAPodWithoutInterceptorsPasses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pod := wrappers.MakePod("plain").UID("uid-plain").Obj()
		f := newFixture(t, evictionapi.Coordination, pod)
		if d := f.decide(pod, drainer, false); !d.Allowed || d.Outcome != OutcomeNoParticipants {
			t.Errorf("decision %+v, want allowed with no participants", d)
		}
		if w := append(writes(f.kube.Actions()), writes(f.evr.Actions())...); len(w) != 0 {
			t.Errorf("the bridge wrote %v", w)
		}
	})
}

// The first eviction of a pod with interceptors asks for the pod's
// eviction as the bridge and is refused with 429 naming the request; the
// caller is recorded on the request, as an event and an annotation.
func TestAnEvictionOfAnInterceptedPodRequestsItAndIsRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pod := interceptedPod("db-0").Obj()
		f := newFixture(t, evictionapi.Coordination, pod)
		d := f.decide(pod, drainer, false)
		if d.Allowed || d.Outcome != OutcomeRequested || d.RetryAfter != DefaultRetryAfter {
			t.Fatalf("decision %+v, want a refusal that requested the eviction", d)
		}
		for _, want := range []string{Evacuation, "evictionrequest/uid-db-0", "coordination.k8s.io"} {
			if !strings.Contains(d.Message, want) {
				t.Errorf("message %q lacks %q", d.Message, want)
			}
		}
		s := f.status(pod)
		if !s.Requested || s.Annotations[CallersAnnotation] != drainer || s.Annotations[LastCallAnnotation] == "" {
			t.Errorf("request %+v: want the bridge among its requesters, the caller and the call recorded", s)
		}
		if event := <-f.recorder.Events; !strings.Contains(event, EventRequestedThroughEvictionAPI) || !strings.Contains(event, drainer) {
			t.Errorf("event %q, want the caller named", event)
		}
		// The next call finds the request in progress, its interceptor's turn.
		f.setActive(pod, "surge.example.com")
		d = f.decide(pod, drainer, false)
		if d.Allowed || d.Outcome != OutcomeInProgress || !strings.Contains(d.Message, "it is the turn of surge.example.com") {
			t.Errorf("decision %+v, want a refusal naming the active interceptor", d)
		}
	})
}

// Once no interceptor is left, evictions pass: the controller's and the
// caller's next retry alike.
func TestEvictionsPassAtTheEvictionStep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pod := interceptedPod("db-0").Obj()
		er := wrappers.MakeEvictionRequest(pod, CoordinationRequester).Interceptors("surge.example.com").Active("surge.example.com").ActiveCompleted().Obj()
		f := newFixture(t, evictionapi.Coordination, pod, er)
		if d := f.decide(pod, drainer, false); !d.Allowed || d.Outcome != OutcomeEvictionStep {
			t.Errorf("decision %+v, want allowed at the eviction step", d)
		}
	})
}

// A dry run is answered as the real eviction would be, and writes nothing.
func TestADryRunWritesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pod := interceptedPod("db-0").Obj()
		f := newFixture(t, evictionapi.Coordination, pod)
		if d := f.decide(pod, drainer, true); d.Allowed || d.Outcome != OutcomeRequested {
			t.Errorf("decision %+v, want the refusal a real eviction gets", d)
		}
		if w := append(writes(f.kube.Actions()), writes(f.evr.Actions())...); len(w) != 0 {
			t.Errorf("a dry run wrote %v", w)
		}
	})
}

// The defined answers: a pod already terminating or gone passes, an exempt
// identity passes, a request that forbids cancellation is refused without
// joining it, a request complete otherwise than canceled passes.
func TestDefinedAnswers(t *testing.T) {
	terminating := interceptedPod("leaving").Terminating(time.Now()).Obj()
	forbidding := interceptedPod("migrating").Obj()
	completed := interceptedPod("done").Obj()
	for name, tc := range map[string]struct {
		pod     *corev1.Pod
		absent  bool
		objects []any
		user    string
		allowed bool
		outcome string
	}{
		"a terminating pod":         {pod: terminating, allowed: true, outcome: OutcomePodTerminating},
		"a pod that does not exist": {pod: interceptedPod("ghost").Obj(), absent: true, allowed: true, outcome: OutcomePodGone},
		"an exempt identity":        {pod: interceptedPod("own").Obj(), user: "system:serviceaccount:evictionrequest-system:evictionrequest-apiserver", allowed: true, outcome: OutcomeExempt},
		// Created now, outside the bubble whose clock starts in 2000: its
		// interceptor is well within its deadline.
		"a request that forbids cancellation": {pod: forbidding, objects: []any{wrappers.MakeEvictionRequest(forbidding, "other.example.com").
			Created(time.Now()).Interceptors("surge.example.com").Active("surge.example.com").Policy(v1alpha1.Forbid).Obj()}, outcome: OutcomeForbidden},
		"a complete request": {pod: completed, objects: []any{wrappers.MakeEvictionRequest(completed, "other.example.com").
			Complete(v1alpha1.CompleteReasonPodTerminated, "terminated").Obj()}, allowed: true, outcome: OutcomeComplete},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				objects := objectsOf(tc.pod, tc.objects)
				if tc.absent {
					objects = objects[1:]
				}
				f := newFixture(t, evictionapi.Coordination, objects...)
				user := tc.user
				if user == "" {
					user = drainer
				}
				if d := f.decide(tc.pod, user, false); d.Allowed != tc.allowed || d.Outcome != tc.outcome {
					t.Errorf("decision %+v, want allowed %v, outcome %s", d, tc.allowed, tc.outcome)
				}
				if tc.outcome == OutcomeForbidden && slices.Contains(writes(f.evr.Actions()), "patch evictionrequests") {
					t.Error("the bridge joined a request whose requesters are locked")
				}
			})
		})
	}
}

// A pod the descheduler evicts in the background is marked
// eviction-in-progress when the bridge requests its eviction.
func TestTheDeschedulerConvention(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pod := interceptedPod("db-0").Annotation(RequestEvictOnlyAnnotation, "").Obj()
		f := newFixture(t, evictionapi.Coordination, pod)
		f.decide(pod, "system:serviceaccount:kube-system:descheduler", false)
		if !f.podAnnotated(pod, EvictionInProgressAnnotation) {
			t.Error("the pod is not marked eviction-in-progress")
		}
	})
}

// On lifecycle.k8s.io the bridge asks through a request of its own, and
// evictions pass once the default evictor has its turn.
func TestLifecycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pod := wrappers.MakePod("db-0").UID("uid-db-0").Responders(wrappers.Responder("example.com/surge", 10000)).Obj()
		f := newFixture(t, evictionapi.Lifecycle, pod)
		d := f.decide(pod, drainer, false)
		if d.Allowed || d.Outcome != OutcomeRequested || !strings.Contains(d.Message, "lifecycle.k8s.io") {
			t.Fatalf("decision %+v, want a refusal that requested the eviction", d)
		}
		if s := f.status(pod); !s.Requested || !strings.HasPrefix(s.Request, "uid-db-0-") {
			t.Errorf("status %+v: want the bridge's own request", s)
		}
		f.evictorActive(pod)
		if d := f.decide(pod, drainer, false); !d.Allowed || d.Outcome != OutcomeEvictionStep {
			t.Errorf("decision %+v, want allowed once the evictor has its turn", d)
		}
	})
}

// A review of an eviction in a namespace that did not opt in is allowed
// untouched and writes nothing, whoever sends it: kube-apiserver's
// namespaceSelector does not hold for a review it did not send.
func TestAReviewInANamespaceThatDidNotOptInWritesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		victim := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "victim"}}
		pod := interceptedPod("sensitive-app").Namespace(victim.Name).Obj()
		f := newFixture(t, evictionapi.Coordination, victim, pod)
		for _, authenticated := range []bool{false, true} {
			d := f.decideEviction(Eviction{Namespace: pod.Namespace, Pod: pod.Name, User: "someone-else@example.com", Authenticated: authenticated})
			if !d.Allowed || d.Outcome != OutcomeNotOptedIn {
				t.Errorf("authenticated %v: decision %+v, want allowed untouched", authenticated, d)
			}
		}
		if w := append(writes(f.kube.Actions()), writes(f.evr.Actions())...); len(w) != 0 {
			t.Errorf("the bridge wrote %v", w)
		}
	})
}

// The bridge applies the namespaceSelector of its own webhook, as
// kube-apiserver does: a cluster-wide selector opts in a namespace without
// the label, and a namespace it leaves out is not the bridge's; a webhook
// configuration that does not exist is an error naming it (the flag names
// the wrong one), not a silent "allowed".
func TestTheBridgeAppliesItsWebhooksNamespaceSelector(t *testing.T) {
	clusterWide := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "evictionrequest-eviction-bridge"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: WebhookName, NamespaceSelector: &metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system"}}},
		}}},
	}
	for _, tc := range []struct {
		name      string
		namespace string
		config    *admissionregistrationv1.ValidatingWebhookConfiguration
		want      string
		wantErr   string
	}{
		{"cluster-wide, a namespace without the label", "shop", clusterWide, OutcomeRequested, ""},
		{"cluster-wide, a namespace it leaves out", "kube-system", clusterWide, OutcomeNotOptedIn, ""},
		{"no webhook configuration", "shop", nil, "", `ValidatingWebhookConfiguration "evictionrequest-eviction-bridge", which --eviction-bridge-webhook-configuration names, does not exist`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tc.namespace, Labels: map[string]string{corev1.LabelMetadataName: tc.namespace}}}
				pod := interceptedPod("db-0").Namespace(tc.namespace).Obj()
				objects := []runtime.Object{ns, pod}
				if tc.config != nil {
					objects = append(objects, tc.config)
				}
				f := newFixtureWith(t, evictionapi.Coordination, Config{WebhookConfiguration: "evictionrequest-eviction-bridge"}, objects...)
				d, err := f.bridge.Decide(t.Context(), Eviction{Namespace: pod.Namespace, Pod: pod.Name, User: drainer, Authenticated: true})
				if tc.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
						t.Errorf("decision %+v, error %v; want an error saying %s", d, err, tc.wantErr)
					}
					return
				}
				if err != nil || d.Outcome != tc.want {
					t.Errorf("decision %+v, error %v; want %s", d, err, tc.want)
				}
			})
		})
	}
}

// What the bridge records names the caller as kube-apiserver reported it,
// and says when the review that named it was not authenticated.
func TestTheTrailSaysWhetherTheCallerWasAuthenticated(t *testing.T) {
	for _, authenticated := range []bool{true, false} {
		t.Run(fmt.Sprint("authenticated ", authenticated), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				pod := interceptedPod("db-0").Obj()
				f := newFixture(t, evictionapi.Coordination, pod)
				f.decideEviction(Eviction{Namespace: pod.Namespace, Pod: pod.Name, User: drainer, Authenticated: authenticated})
				event, callers := <-f.recorder.Events, f.status(pod).Annotations[CallersAnnotation]
				wantEvent, wantCallers := "Requested through the eviction API by "+drainer+".", drainer
				if !authenticated {
					wantEvent = "Requested through the eviction API by " + drainer + ", as an unauthenticated review claimed"
					wantCallers = drainer + " (unauthenticated)"
				}
				if !strings.Contains(event, wantEvent) {
					t.Errorf("event %q, want %q", event, wantEvent)
				}
				if callers != wantCallers {
					t.Errorf("callers %q, want %q", callers, wantCallers)
				}
			})
		})
	}
}

// The bridge asks for the eviction in one write: the apply that creates
// its request carries the call's annotations, so that no request of the
// bridge is ever without them (the janitor judges by them). On both APIs.
func TestTheRequestIsWrittenOnceWithItsAnnotations(t *testing.T) {
	for _, api := range []evictionapi.API{evictionapi.Coordination, evictionapi.Lifecycle} {
		t.Run(api.Group(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				pod := protectedPod(api).Obj()
				f := newFixture(t, api, pod)
				if d := f.decide(pod, drainer, false); d.Outcome != OutcomeRequested {
					t.Fatalf("decision %+v, want a refusal that requested the eviction", d)
				}
				actions := append(f.kube.Actions(), f.evr.Actions()...)
				if w := writes(actions); !slices.Equal(w, []string{"patch evictionrequests"}) {
					t.Fatalf("the bridge wrote %v, want one apply of its request", w)
				}
				for _, a := range actions {
					if patch, ok := a.(clienttesting.PatchAction); ok {
						for _, key := range []string{LastCallAnnotation, CallersAnnotation} {
							if !bytes.Contains(patch.GetPatch(), []byte(key)) {
								t.Errorf("the apply of the request lacks %s: %s", key, patch.GetPatch())
							}
						}
					}
				}
				if s := f.status(pod); s.Annotations[LastCallAnnotation] == "" || s.Annotations[CallersAnnotation] != drainer {
					t.Errorf("the request as stored: %+v, want the call recorded", s)
				}
			})
		})
	}
}
