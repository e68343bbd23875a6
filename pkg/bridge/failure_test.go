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
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/component-base/metrics/testutil"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	"github.com/evictionrequest/apiserver/pkg/bridge/metrics"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
)

// failOn makes the fake clientset of the writes of resource answer verb
// with err.
func (f *fixture) failOn(api evictionapi.API, verb, resource string, err error) {
	var client interface {
		PrependReactor(verb, resource string, reaction clienttesting.ReactionFunc)
	} = f.kube
	if resource == "evictionrequests" && api == evictionapi.Coordination {
		client = f.evr
	}
	client.PrependReactor(verb, resource, func(clienttesting.Action) (bool, runtime.Object, error) { return true, nil, err })
}

// unreadableStatus is a participant whose request cannot be read.
type unreadableStatus struct {
	participant.Participant
	err error
}

func (u unreadableStatus) Status(context.Context, string, types.UID) (participant.Status, error) {
	return participant.Status{}, u.err
}

// hangingRequest is a participant whose writes hang until their context
// ends, as a call to a kube-apiserver that does not answer.
type hangingRequest struct{ participant.Participant }

func (hangingRequest) Request(ctx context.Context, _ *corev1.Pod, _ map[string]string) (participant.Status, error) {
	<-ctx.Done()
	return participant.Status{}, fmt.Errorf("the EvictionRequest was not written: %w", ctx.Err())
}

// Every failure of the bridge once it knows the pod is protected keeps the
// pod: a 429 with Retry-After that names what failed and why, without
// "Eviction triggered evacuation" (nothing is under way), counted as
// failed, and no write after the one that failed (the pod, which the
// descheduler evicts in the background, is not marked; no event says the
// eviction was requested unless it was). On both APIs.
func TestEveryFailureOfTheBridgeKeepsTheProtectedPod(t *testing.T) {
	metrics.Register()
	for _, api := range []evictionapi.API{evictionapi.Coordination, evictionapi.Lifecycle} {
		group := api.Group()
		requests := schema.GroupResource{Group: group, Resource: "evictionrequests"}
		quota := fmt.Sprintf("exceeded quota: one-request, requested: count/evictionrequests.%[1]s=1, used: count/evictionrequests.%[1]s=1, limited: count/evictionrequests.%[1]s=1", group)
		for _, tc := range []struct {
			name string
			// objects are there besides the pod; fail breaks the fixture.
			objects []runtime.Object
			fail    func(f *fixture)
			// message holds these; writes are all the bridge writes, the
			// failed one last; requested when the request was written,
			// which an event records.
			message   []string
			writes    []string
			requested bool
		}{
			{name: "a full quota", fail: func(f *fixture) {
				f.failOn(api, "patch", "evictionrequests", apierrors.NewForbidden(requests, "r", errors.New(quota)))
			}, message: []string{"could not be created", quota, "the pod is not evicted until its request exists"}, writes: []string{"patch evictionrequests"}},
			{name: "a conflict", fail: func(f *fixture) {
				f.failOn(api, "patch", "evictionrequests", apierrors.NewConflict(requests, "r", errors.New("the object has been modified")))
			}, message: []string{"could not be created", "the object has been modified"}, writes: []string{"patch evictionrequests"}},
			{name: "a race that ended in AlreadyExists", fail: func(f *fixture) {
				f.failOn(api, "patch", "evictionrequests", apierrors.NewAlreadyExists(requests, "r"))
			}, message: []string{"could not be created", "already exists"}, writes: []string{"patch evictionrequests"}},
			{name: "a refusal of admission", fail: func(f *fixture) {
				f.failOn(api, "patch", "evictionrequests", apierrors.NewForbidden(requests, "r",
					errors.New(`user "system:serviceaccount:evictionrequest-system:evictionrequest-apiserver" cannot delete pod "db-0"`)))
			}, message: []string{"could not be created", "cannot delete pod"}, writes: []string{"patch evictionrequests"}},
			{name: "a refusal of validation", fail: func(f *fixture) {
				f.failOn(api, "patch", "evictionrequests", apierrors.NewInvalid(requests.WithVersion("v1alpha1").GroupVersion().WithKind("EvictionRequest").GroupKind(), "r",
					field.ErrorList{field.TooLong(field.NewPath("metadata", "annotations"), "", 256*1024)}))
			}, message: []string{"could not be created", "metadata.annotations: Too long"}, writes: []string{"patch evictionrequests"}},
			{name: "a time-out of kube-apiserver", fail: func(f *fixture) {
				f.failOn(api, "patch", "evictionrequests", apierrors.NewTimeoutError("request did not complete within requested timeout", 0))
			}, message: []string{"could not be created", "request did not complete within requested timeout"}, writes: []string{"patch evictionrequests"}},
			{name: "an error of kube-apiserver", fail: func(f *fixture) {
				f.failOn(api, "patch", "evictionrequests", apierrors.NewInternalError(errors.New("etcdserver: leader changed")))
			}, message: []string{"could not be created", "etcdserver: leader changed"}, writes: []string{"patch evictionrequests"}},
			{name: "the descheduler's mark of the pod", fail: func(f *fixture) {
				f.failOn(api, "patch", "pods", apierrors.NewInternalError(errors.New("etcdserver: request timed out")))
			}, message: []string{"could not be annotated " + EvictionInProgressAnnotation + " for the descheduler", "etcdserver: request timed out"},
				writes: []string{"patch evictionrequests", "patch pods"}, requested: true},
			{name: "the request cannot be read", fail: func(f *fixture) {
				f.bridge.cfg.Participant = unreadableStatus{f.bridge.cfg.Participant, errors.New("the cache is gone")}
			}, message: []string{"could not be read: the cache is gone", "the pod is not evicted until the eviction API bridge can tell where its eviction stands"}},
		} {
			t.Run(fmt.Sprintf("%s, %s", group, tc.name), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					pod := protectedPod(api).Annotation(RequestEvictOnlyAnnotation, "").Obj()
					f := newFixture(t, api, append([]runtime.Object{pod}, tc.objects...)...)
					tc.fail(f)
					before, _ := testutil.GetCounterMetricValue(metrics.Decisions.WithLabelValues(OutcomeFailed))
					f.checkFailureRefusal(pod, tc.message...)
					if after, _ := testutil.GetCounterMetricValue(metrics.Decisions.WithLabelValues(OutcomeFailed)); after != before+1 {
						t.Errorf("decisions_total{outcome=%q} went from %v to %v, want one more", OutcomeFailed, before, after)
					}
					if w := append(writes(f.kube.Actions()), writes(f.evr.Actions())...); !slices.Equal(sorted(w), sorted(tc.writes)) {
						t.Errorf("the bridge wrote %v, want %v", w, tc.writes)
					}
					if events := len(f.recorder.Events); (events > 0) != tc.requested {
						t.Errorf("%d events recorded, want one only when the request was written", events)
					}
				})
			})
		}
	}
}

// A write that hangs is given up before kube-apiserver gives up on the
// review (its timeout parameter), and answered with a refusal naming the
// time-out: the webhook's failurePolicy never sees it.
func TestAWriteThatHangsIsRefusedBeforeKubeAPIServerGivesUp(t *testing.T) {
	for _, api := range []evictionapi.API{evictionapi.Coordination, evictionapi.Lifecycle} {
		t.Run(api.Group(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				pod := protectedPod(api).Obj()
				f := newFixture(t, api, pod)
				f.bridge.cfg.Participant = hangingRequest{f.bridge.cfg.Participant}
				f.reviewer = func(r *http.Request) { r.URL.RawQuery = "timeout=5s" }
				start := time.Now()
				f.checkFailureRefusal(pod, "could not be created", context.DeadlineExceeded.Error())
				if took := time.Since(start); took >= 5*time.Second {
					t.Errorf("answered after %v, when kube-apiserver gave up after 5s", took)
				}
			})
		})
	}
}

// checkFailureRefusal reviews the eviction of pod and checks the answer is
// a refusal for a failure of the bridge that says message.
func (f *fixture) checkFailureRefusal(pod *corev1.Pod, message ...string) {
	f.t.Helper()
	code, response := f.review(pod.Namespace, pod.Name)
	if code != http.StatusOK || response == nil || response.Allowed || response.Result == nil {
		f.t.Fatalf("HTTP %d, response %+v: want a refusal", code, response)
	}
	r := response.Result
	if r.Code != http.StatusTooManyRequests || r.Details == nil || r.Details.RetryAfterSeconds != int32(DefaultRetryAfter/time.Second) {
		f.t.Errorf("result %+v, want 429 with Retry-After %v", r, DefaultRetryAfter)
	}
	for _, want := range message {
		if !strings.Contains(r.Message, want) {
			f.t.Errorf("message %q lacks %q", r.Message, want)
		}
	}
	if strings.Contains(r.Message, Evacuation) {
		f.t.Errorf("message %q says %q, when nothing is under way", r.Message, Evacuation)
	}
	if _, err := f.kube.CoreV1().Pods(pod.Namespace).Get(f.ctx, pod.Name, metav1.GetOptions{}); err != nil {
		f.t.Errorf("the pod: %v", err)
	}
}

// protectedPod is a pod that declares a participant of its eviction on api.
func protectedPod(api evictionapi.API) *wrappers.PodWrapper {
	if api == evictionapi.Lifecycle {
		return wrappers.MakePod("db-0").UID("uid-db-0").Responders(wrappers.Responder("example.com/surge", 10000))
	}
	return interceptedPod("db-0")
}

func sorted(s []string) []string {
	return slices.Sorted(slices.Values(s))
}
