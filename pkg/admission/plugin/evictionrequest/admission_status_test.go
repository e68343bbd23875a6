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

package evictionrequest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination"
)

const (
	// interceptorUser may delete the pods of the namespace, as the
	// shipped evictionrequest-interceptor role lets it where it is bound.
	interceptorUser = "db-operator"
	// controllerUser may, besides, update evictionrequests/controller.
	controllerUser = "controller"
)

// statusRBAC answers as RBAC would for an interceptor bound to the shipped
// role, a controller with the controller's right, and anyone else with
// neither; it records the questions asked.
func statusRBAC(questions *[]string) authorizer.AuthorizerFunc {
	return func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		*questions = append(*questions, strings.Join([]string{a.GetUser().GetName(), a.GetVerb(), a.GetResource() + "/" + a.GetSubresource(), a.GetName()}, " "))
		user := a.GetUser().GetName()
		switch {
		case a.GetVerb() == "delete" && a.GetResource() == "pods" && (user == interceptorUser || user == controllerUser):
			return authorizer.DecisionAllow, "", nil
		case a.GetVerb() == "update" && a.GetAPIGroup() == coordination.GroupName && a.GetResource() == "evictionrequests" &&
			a.GetSubresource() == ControllerSubresource && user == controllerUser:
			return authorizer.DecisionAllow, "", nil
		}
		return authorizer.DecisionNoOpinion, "no RBAC rule allows it", nil
	}
}

// activeOf makes b.example.com the active interceptor of a request whose
// interceptors are a.example.com and b.example.com.
func activeOf(er *coordination.EvictionRequest) {
	er.Spec.Interceptors = []coordination.Interceptor{{Name: "a.example.com"}, {Name: "b.example.com"}}
	er.Status.ActiveInterceptorName = ptr.To("b.example.com")
}

// TestStatusWritesNeedTheRightToDeleteThePod: a status write is an update,
// and KEP-4563 asks whoever updates a request to be allowed to delete its
// pod; the refusal names the pod and the rule.
func TestStatusWritesNeedTheRightToDeleteThePod(t *testing.T) {
	var questions []string
	plugin := newPluginWith(t, statusRBAC(&questions), []runtime.Object{newPod()}, nil)
	oldER := newEvictionRequest(activeOf)
	newER := oldER.DeepCopy()
	newER.Status.HeartbeatTime = ptr.To(metav1.Now())

	err := plugin.Validate(context.Background(), attributes(admission.Update, "status", "status-writer", newER, oldER), nil)
	if got := refusal(err); got != "403" || !strings.Contains(err.Error(), `cannot delete pod "web-0"`) ||
		!strings.Contains(err.Error(), `verb "delete" on resource "pods"`) {
		t.Errorf("a heartbeat by a writer who may not delete the pod: %v, want a 403 naming the pod and the rule", err)
	}
	if err := plugin.Validate(context.Background(), attributes(admission.Update, "status", interceptorUser, newER, oldER), nil); err != nil {
		t.Errorf("a heartbeat by an interceptor that may delete the pod: %v", err)
	}
}

// TestStatusWritesLeaveTheControllersFieldsToTheController: an
// interceptor writes what KEP-4563 gives interceptors; a change of a field
// that is the controller's is refused with a 403 naming it, unless the
// writer may update evictionrequests/controller.
func TestStatusWritesLeaveTheControllersFieldsToTheController(t *testing.T) {
	complete := func(er *coordination.EvictionRequest) {
		er.Status.ActiveInterceptorName = nil
		er.Status.Conditions = append(er.Status.Conditions, metav1.Condition{Type: string(coordination.EvictionRequestComplete),
			Status: metav1.ConditionTrue, Reason: "PodDeleted", LastTransitionTime: metav1.NewTime(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))})
	}
	completed := func(er *coordination.EvictionRequest) { er.Status.ActiveInterceptorCompleted = true }
	cases := map[string]struct {
		old    []func(*coordination.EvictionRequest)
		change func(*coordination.EvictionRequest)
		// wantFields are the fields an interceptor's refusal names; none
		// when an interceptor may make the change.
		wantFields []string
	}{
		"a heartbeat, an estimate, a message and a cancellation policy": {change: func(er *coordination.EvictionRequest) {
			er.Status.HeartbeatTime = ptr.To(metav1.Now())
			er.Status.ExpectedInterceptorFinishTime = ptr.To(metav1.NewTime(time.Now().Add(time.Hour)))
			er.Status.Message = "migrating"
			er.Status.EvictionRequestCancellationPolicy = ptr.To(coordination.Forbid)
		}},
		"a condition of the interceptor's own": {change: func(er *coordination.EvictionRequest) {
			er.Status.Conditions = []metav1.Condition{{Type: "Migrating", Status: metav1.ConditionTrue, Reason: "Copying", LastTransitionTime: metav1.Now()}}
		}},
		"its turn completed": {change: completed},
		"a heartbeat after its turn completed": {old: []func(*coordination.EvictionRequest){completed}, change: func(er *coordination.EvictionRequest) {
			er.Status.HeartbeatTime = ptr.To(metav1.Now())
		}},
		"Complete dated 2020": {change: complete, wantFields: []string{"status.activeInterceptorName", "status.conditions[Complete]"}},
		"a Complete condition that is False": {change: func(er *coordination.EvictionRequest) {
			complete(er)
			er.Status.Conditions[0].Status = metav1.ConditionFalse
			er.Status.ActiveInterceptorName = ptr.To("b.example.com")
		}, wantFields: []string{"status.conditions[Complete]"}},
		"a hand-off to the next interceptor": {change: func(er *coordination.EvictionRequest) { er.Status.ActiveInterceptorName = ptr.To("a.example.com") }, wantFields: []string{"status.activeInterceptorName"}},
		"its completion taken back":          {old: []func(*coordination.EvictionRequest){completed}, change: func(er *coordination.EvictionRequest) { er.Status.ActiveInterceptorCompleted = false }, wantFields: []string{"status.activeInterceptorCompleted"}},
		"a failed eviction counted": {change: func(er *coordination.EvictionRequest) {
			er.Status.PodEvictionStatus = &coordination.PodEvictionStatus{FailedAPIEvictionCounter: 1}
		}, wantFields: []string{"status.podEvictionStatus"}},
		"the message of the controller's Complete": {old: []func(*coordination.EvictionRequest){complete}, change: func(er *coordination.EvictionRequest) { er.Status.Conditions[0].Message = "rewritten" }, wantFields: []string{"status.conditions[Complete]"}},
		"the message once the request completed":   {old: []func(*coordination.EvictionRequest){complete}, change: func(er *coordination.EvictionRequest) { er.Status.Message = "done" }},
		"the controller's fields written back unchanged": {old: []func(*coordination.EvictionRequest){complete, func(er *coordination.EvictionRequest) {
			er.Status.PodEvictionStatus = &coordination.PodEvictionStatus{FailedAPIEvictionCounter: 3}
		}}, change: func(*coordination.EvictionRequest) {}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var questions []string
			plugin := newPluginWith(t, statusRBAC(&questions), []runtime.Object{newPod()}, nil)
			oldER := newEvictionRequest(append([]func(*coordination.EvictionRequest){activeOf}, tc.old...)...)
			newER := oldER.DeepCopy()
			tc.change(newER)

			err := plugin.Validate(context.Background(), attributes(admission.Update, "status", interceptorUser, newER, oldER), nil)
			want := ""
			if len(tc.wantFields) > 0 {
				want = "403 FieldValueForbidden " + strings.Join(tc.wantFields, " FieldValueForbidden ")
			}
			if got := refusal(err); got != want {
				t.Errorf("the interceptor's write: refusal %q, want %q (error: %v)", got, want, err)
			}
			for _, f := range tc.wantFields {
				if err != nil && (!strings.Contains(err.Error(), f) || !strings.Contains(err.Error(), `"evictionrequests/controller"`)) {
					t.Errorf("the refusal %q does not name %s and the rule", err, f)
				}
			}
			if err := plugin.Validate(context.Background(), attributes(admission.Update, "status", controllerUser, newER, oldER), nil); err != nil {
				t.Errorf("the same write by a writer with the controller's right: %v", err)
			}
			if len(tc.wantFields) == 0 {
				for _, q := range questions {
					if strings.Contains(q, "/"+ControllerSubresource+" ") {
						t.Errorf("an interceptor's own write asked %q: its hot path must cost no review", q)
					}
				}
			}
		})
	}
}

// TestStatusWritesAskTheCachedQuestion: the right to delete the pod is
// asked of a status write as of any write, first about every pod of the
// namespace, which the delegated authorizer answers from its cache for the
// same caller and namespace, so that heartbeats cost no review per request.
func TestStatusWritesAskTheCachedQuestion(t *testing.T) {
	var questions []string
	plugin := newPluginWith(t, statusRBAC(&questions), []runtime.Object{newPod()}, nil)
	oldER := newEvictionRequest(activeOf)
	for range 3 {
		newER := oldER.DeepCopy()
		newER.Status.HeartbeatTime = ptr.To(metav1.Now())
		if err := plugin.Validate(context.Background(), attributes(admission.Update, "status", interceptorUser, newER, oldER), nil); err != nil {
			t.Fatal(err)
		}
	}
	// No name: the question about every pod of the namespace.
	namespaceWide := interceptorUser + " delete pods/ "
	if want := []string{namespaceWide, namespaceWide, namespaceWide}; !slices.Equal(questions, want) {
		t.Errorf("questions %q, want %q: one about the namespace's pods per write", questions, want)
	}
}

// TestStatusWritesTheAuthorizerCannotJudgeAreRetryable: when the
// authorizer fails, a status write is refused with a 500, which clients
// retry, not a 403 that says the caller lacks a right it may have: both for
// the right to delete the pod and for the controller's right.
func TestStatusWritesTheAuthorizerCannotJudgeAreRetryable(t *testing.T) {
	failing := func(failOn string) authorizer.AuthorizerFunc {
		var questions []string
		rbac := statusRBAC(&questions)
		return func(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
			if a.GetResource() == failOn {
				return authorizer.DecisionNoOpinion, "", errors.New("the webhook authorizer timed out")
			}
			return rbac(ctx, a)
		}
	}
	for _, tc := range []struct {
		name, failOn string
		change       func(*coordination.EvictionRequest)
	}{
		{"the right to delete the pod", "pods", func(er *coordination.EvictionRequest) { er.Status.HeartbeatTime = ptr.To(metav1.Now()) }},
		{"the controller's right", "evictionrequests", func(er *coordination.EvictionRequest) { er.Status.ActiveInterceptorName = ptr.To("a.example.com") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plugin := newPluginWith(t, failing(tc.failOn), []runtime.Object{newPod()}, nil)
			oldER := newEvictionRequest(activeOf)
			newER := oldER.DeepCopy()
			tc.change(newER)
			err := plugin.Validate(context.Background(), attributes(admission.Update, "status", controllerUser, newER, oldER), nil)
			if !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), "the webhook authorizer timed out") {
				t.Errorf("%v, want a 500 saying why", err)
			}
		})
	}
}
