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
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	genericadmissioninitializer "k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination"
)

const (
	namespace = "shop"
	podUID    = "11111111-2222-4333-8444-555555555555"
	// allowedUser may delete every pod; other users may delete none.
	allowedUser = "drainer"
)

func newPod(mutate ...func(*corev1.Pod)) *corev1.Pod {
	pod := wrappers.MakePod("web-0").Namespace(namespace).UID(podUID).Label("app", "web").Label("tier", "frontend").
		Annotation(podInterceptorsAnnotation, "fallback.rescue.example.com, deployment.apps.k8s.io,migrator.example.com").Obj()
	for _, m := range mutate {
		m(pod)
	}
	return pod
}

func newEvictionRequest(mutate ...func(*coordination.EvictionRequest)) *coordination.EvictionRequest {
	er := &coordination.EvictionRequest{
		ObjectMeta: metav1.ObjectMeta{Name: podUID, Namespace: namespace, Labels: map[string]string{"tier": "requester-says", "requester": "drain"}},
		Spec: coordination.EvictionRequestSpec{
			Type:                     coordination.Soft,
			Target:                   coordination.EvictionTarget{PodRef: &coordination.LocalPodReference{Name: "web-0", UID: podUID}},
			Requesters:               []coordination.Requester{{Name: "nodemaintenance.k8s.io"}},
			HeartbeatDeadlineSeconds: ptr.To[int32](1800),
		},
		Status: coordination.EvictionRequestStatus{EvictionRequestCancellationPolicy: ptr.To(coordination.Allow)},
	}
	for _, m := range mutate {
		m(er)
	}
	return er
}

// newPlugin returns the plugin initialized like the server does it, with a
// real pod informer over a fake clientset holding cached, and live GETs
// answered by a second fake clientset holding live: the two differ when a
// test wants the cache to lag behind kube-apiserver.
func newPlugin(t *testing.T, cached, live []runtime.Object) *Plugin {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)

	factory := informers.NewSharedInformerFactory(fake.NewClientset(cached...), 0)
	authz := authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		if a.GetUser().GetName() == allowedUser && a.GetVerb() == "delete" && a.GetResource() == "pods" && a.GetAPIGroup() == "" {
			return authorizer.DecisionAllow, "", nil
		}
		return authorizer.DecisionNoOpinion, "no RBAC rule allows it", nil
	})
	plugin := New()
	genericadmissioninitializer.New(fake.NewClientset(live...), nil, factory, authz, nil, nil, nil, nil).Initialize(plugin)
	if err := plugin.ValidateInitialization(); err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	return plugin
}

func attributes(op admission.Operation, subresource, userName string, obj, old runtime.Object) admission.Attributes {
	var options runtime.Object
	switch op {
	case admission.Create:
		options = &metav1.CreateOptions{}
	case admission.Update:
		options = &metav1.UpdateOptions{}
	case admission.Delete:
		options = &metav1.DeleteOptions{}
	}
	return admission.NewAttributesRecord(obj, old,
		coordination.Kind("EvictionRequest").WithVersion("v1alpha1"), namespace, podUID,
		coordination.Resource("evictionrequests").WithVersion("v1alpha1"), subresource,
		op, options, false, &user.DefaultInfo{Name: userName})
}

// refusal reduces an admission error to what a client sees: the HTTP code
// and the fields a 422 names.
func refusal(err error) string {
	if err == nil {
		return ""
	}
	status, ok := err.(apierrors.APIStatus)
	if !ok {
		return "non-API error: " + err.Error()
	}
	s := fmt.Sprint(status.Status().Code)
	if details := status.Status().Details; details != nil {
		for _, cause := range details.Causes {
			s += " " + string(cause.Type) + " " + cause.Field
		}
	}
	return s
}

// createCases are the cases of TestAdmitCreate: the pods the cache and the API server have, the request and its writer, and what admission must make of it.
var createCases = map[string]struct {
	cached, live     []runtime.Object
	mutate           func(*coordination.EvictionRequest)
	user             string
	wantRefusal      string
	wantInterceptors []string
	wantLabels       map[string]string
}{
	"interceptors come from the annotation in order and pod labels win": {
		cached: []runtime.Object{newPod()}, live: []runtime.Object{newPod()},
		wantInterceptors: []string{"fallback.rescue.example.com", "deployment.apps.k8s.io", "migrator.example.com"},
		wantLabels:       map[string]string{"app": "web", "tier": "frontend", "requester": "drain"},
	},
	"a pod without the annotation has no interceptors": {
		cached:     []runtime.Object{newPod(func(p *corev1.Pod) { p.Annotations = nil })},
		wantLabels: map[string]string{"app": "web", "tier": "frontend", "requester": "drain"},
	},
	"a pod created a moment ago is found by a live GET": {
		live:             []runtime.Object{newPod()},
		wantInterceptors: []string{"fallback.rescue.example.com", "deployment.apps.k8s.io", "migrator.example.com"},
		wantLabels:       map[string]string{"app": "web", "tier": "frontend", "requester": "drain"},
	},
	"a pod recreated with a new UID the cache has not seen is found live": {
		cached:     []runtime.Object{newPod(func(p *corev1.Pod) { p.UID = "old-uid" })},
		live:       []runtime.Object{newPod(func(p *corev1.Pod) { p.Annotations = nil })},
		wantLabels: map[string]string{"app": "web", "tier": "frontend", "requester": "drain"},
	},
	"interceptors set by the client are refused": {
		cached: []runtime.Object{newPod()},
		mutate: func(er *coordination.EvictionRequest) {
			er.Spec.Interceptors = []coordination.Interceptor{{Name: "sneaky.example.com"}}
		},
		wantRefusal: "422 FieldValueForbidden spec.interceptors",
	},
	"a missing pod is refused": {
		wantRefusal: "422 FieldValueNotFound spec.target.podRef.name",
	},
	"a pod with another UID is refused": {
		cached:      []runtime.Object{newPod(func(p *corev1.Pod) { p.UID = "other-uid" })},
		live:        []runtime.Object{newPod(func(p *corev1.Pod) { p.UID = "other-uid" })},
		wantRefusal: "422 FieldValueInvalid spec.target.podRef.uid",
	},
	"a pod with the same name in another namespace is not the target": {
		cached:      []runtime.Object{newPod(func(p *corev1.Pod) { p.Namespace = "elsewhere" })},
		live:        []runtime.Object{newPod(func(p *corev1.Pod) { p.Namespace = "elsewhere" })},
		wantRefusal: "422 FieldValueNotFound spec.target.podRef.name",
	},
	"an invalid interceptor name in the annotation is refused": {
		cached:      []runtime.Object{newPod(func(p *corev1.Pod) { p.Annotations[podInterceptorsAnnotation] = "ok.example.com,Not_A_Name" })},
		wantRefusal: "422 FieldValueInvalid spec.interceptors[1].name",
	},
	"a duplicate interceptor in the annotation is refused": {
		cached:      []runtime.Object{newPod(func(p *corev1.Pod) { p.Annotations[podInterceptorsAnnotation] = "a.example.com,a.example.com" })},
		wantRefusal: "422 FieldValueDuplicate spec.interceptors[1].name",
	},
	"an empty entry in the annotation is refused": {
		cached:      []runtime.Object{newPod(func(p *corev1.Pod) { p.Annotations[podInterceptorsAnnotation] = "a.example.com,,b.example.com" })},
		wantRefusal: "422 FieldValueRequired spec.interceptors[1].name",
	},
	"a k8s.io interceptor off the allow-list is refused": {
		cached:      []runtime.Object{newPod(func(p *corev1.Pod) { p.Annotations[podInterceptorsAnnotation] = "actor-a.k8s.io" })},
		wantRefusal: "422 FieldValueInvalid spec.interceptors[0].name",
	},
	"more than 100 interceptors are refused": {
		cached: []runtime.Object{newPod(func(p *corev1.Pod) {
			names := make([]string, 101)
			for i := range names {
				names[i] = fmt.Sprintf("i%d.example.com", i)
			}
			p.Annotations[podInterceptorsAnnotation] = strings.Join(names, ",")
		})},
		wantRefusal: "422 FieldValueTooMany spec.interceptors",
	},
	"a caller who may not delete the pod is forbidden": {
		cached: []runtime.Object{newPod()}, user: "intern",
		wantRefusal: "403",
	},
}

func TestAdmitCreate(t *testing.T) {
	cases := createCases
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			plugin := newPlugin(t, tc.cached, tc.live)
			er := newEvictionRequest()
			if tc.mutate != nil {
				tc.mutate(er)
			}
			if tc.user == "" {
				tc.user = allowedUser
			}
			a := attributes(admission.Create, "", tc.user, er, nil)
			err := plugin.Admit(context.Background(), a, nil)
			if got := refusal(err); got != tc.wantRefusal {
				t.Fatalf("refusal = %q, want %q (error: %v)", got, tc.wantRefusal, err)
			}
			if err != nil {
				return
			}
			var interceptors []string
			for _, i := range er.Spec.Interceptors {
				interceptors = append(interceptors, i.Name)
			}
			if diff := cmp.Diff(tc.wantInterceptors, interceptors); diff != "" {
				t.Errorf("spec.interceptors (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantLabels, er.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRefusalsNameTheRule(t *testing.T) {
	plugin := newPlugin(t, []runtime.Object{newPod(func(p *corev1.Pod) { p.Annotations[podInterceptorsAnnotation] = "actor-a.k8s.io" })}, nil)
	err := plugin.Admit(context.Background(), attributes(admission.Create, "", allowedUser, newEvictionRequest(), nil), nil)
	for _, want := range []string{"spec.interceptors[0].name", podInterceptorsAnnotation, "web-0", "reserved"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("refusal of a reserved interceptor name %q lacks %q", err, want)
		}
	}

	err = plugin.Validate(context.Background(), attributes(admission.Create, "", "intern", newEvictionRequest(), nil), nil)
	for _, want := range []string{`"intern"`, `cannot delete pod "web-0"`, `verb "delete" on resource "pods"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("403 %q lacks %q", err, want)
		}
	}
}

func TestValidateUpdate(t *testing.T) {
	addRequester := func(er *coordination.EvictionRequest) {
		er.Spec.Requesters = append(er.Spec.Requesters, coordination.Requester{Name: "descheduler.example.com"})
	}
	dropRequesters := func(er *coordination.EvictionRequest) { er.Spec.Requesters = nil }
	forbid := func(er *coordination.EvictionRequest) {
		er.Status.EvictionRequestCancellationPolicy = ptr.To(coordination.Forbid)
	}
	complete := func(er *coordination.EvictionRequest) {
		er.Status.Conditions = []metav1.Condition{{Type: "Complete", Status: metav1.ConditionTrue, Reason: "PodDeleted"}}
	}
	cases := map[string]struct {
		old         []func(*coordination.EvictionRequest)
		change      func(*coordination.EvictionRequest)
		subresource string
		user        string
		wantRefusal string
	}{
		"requesters may change under Allow":      {change: addRequester},
		"requesters may be emptied under Allow":  {change: dropRequesters},
		"requesters are locked under Forbid":     {old: []func(*coordination.EvictionRequest){forbid}, change: dropRequesters, wantRefusal: "422 FieldValueForbidden spec.requesters"},
		"adding a requester is locked too":       {old: []func(*coordination.EvictionRequest){forbid}, change: addRequester, wantRefusal: "422 FieldValueForbidden spec.requesters"},
		"requesters are locked once Complete":    {old: []func(*coordination.EvictionRequest){complete}, change: addRequester, wantRefusal: "422 FieldValueForbidden spec.requesters"},
		"other changes under Forbid are allowed": {old: []func(*coordination.EvictionRequest){forbid}, change: func(er *coordination.EvictionRequest) { er.Labels["x"] = "y" }},
		"a status update is not a requester change": {
			old: []func(*coordination.EvictionRequest){forbid}, change: dropRequesters, subresource: "status",
		},
		"a caller who may not delete the pod may not update": {change: addRequester, user: "intern", wantRefusal: "403"},
		"a caller who may not delete the pod may not update status": {
			change: func(er *coordination.EvictionRequest) { er.Status.Message = "hi" }, subresource: "status", user: "intern", wantRefusal: "403",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			plugin := newPlugin(t, []runtime.Object{newPod()}, []runtime.Object{newPod()})
			oldER := newEvictionRequest(tc.old...)
			newER := oldER.DeepCopy()
			tc.change(newER)
			if tc.user == "" {
				tc.user = allowedUser
			}
			err := plugin.Validate(context.Background(), attributes(admission.Update, tc.subresource, tc.user, newER, oldER), nil)
			if got := refusal(err); got != tc.wantRefusal {
				t.Errorf("refusal = %q, want %q (error: %v)", got, tc.wantRefusal, err)
			}
		})
	}
}

func TestValidateDelete(t *testing.T) {
	forbid := func(er *coordination.EvictionRequest) {
		er.Status.EvictionRequestCancellationPolicy = ptr.To(coordination.Forbid)
	}
	cases := map[string]struct {
		live        []runtime.Object
		policy      func(*coordination.EvictionRequest)
		user        string
		wantRefusal string
	}{
		"Allow may be deleted while the pod runs":      {live: []runtime.Object{newPod()}},
		"Forbid may not be deleted while the pod runs": {live: []runtime.Object{newPod()}, policy: forbid, wantRefusal: "403"},
		"Forbid may not be deleted while the pod is pending": {
			live: []runtime.Object{newPod(func(p *corev1.Pod) { p.Status.Phase = corev1.PodPending })}, policy: forbid, wantRefusal: "403",
		},
		"Forbid may be deleted once the pod is gone": {policy: forbid},
		"Forbid may be deleted once the pod failed": {
			live: []runtime.Object{newPod(func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed; p.Status.Reason = "Terminated" })}, policy: forbid,
		},
		"Forbid may be deleted once the pod succeeded": {
			live: []runtime.Object{newPod(func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded })}, policy: forbid,
		},
		"Forbid may be deleted once the pod was replaced": {
			live: []runtime.Object{newPod(func(p *corev1.Pod) { p.UID = "new-uid" })}, policy: forbid,
		},
		"a caller who may not delete the pod may not delete the request": {live: []runtime.Object{newPod()}, user: "intern", wantRefusal: "403"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			// The cache still shows the running pod: only the live state may
			// keep the request from being deleted.
			plugin := newPlugin(t, []runtime.Object{newPod()}, tc.live)
			er := newEvictionRequest()
			if tc.policy != nil {
				tc.policy(er)
			}
			if tc.user == "" {
				tc.user = allowedUser
			}
			err := plugin.Validate(context.Background(), attributes(admission.Delete, "", tc.user, nil, er), nil)
			if got := refusal(err); got != tc.wantRefusal {
				t.Errorf("refusal = %q, want %q (error: %v)", got, tc.wantRefusal, err)
			}
			if tc.wantRefusal == "403" && tc.policy != nil && !strings.Contains(err.Error(), "evictionRequestCancellationPolicy is Forbid") {
				t.Errorf("the refusal %q does not name the cancellation policy", err)
			}
		})
	}
}

func TestOtherResourcesAreIgnored(t *testing.T) {
	plugin := newPlugin(t, nil, nil)
	a := admission.NewAttributesRecord(newPod(), nil, corev1.SchemeGroupVersion.WithKind("Pod"), namespace, "web-0",
		corev1.SchemeGroupVersion.WithResource("pods"), "", admission.Create, &metav1.CreateOptions{}, false, &user.DefaultInfo{Name: "intern"})
	if err := plugin.Admit(context.Background(), a, nil); err != nil {
		t.Errorf("Admit of a pod: %v", err)
	}
	if err := plugin.Validate(context.Background(), a, nil); err != nil {
		t.Errorf("Validate of a pod: %v", err)
	}
}

func TestNotReadyIsRetryable(t *testing.T) {
	plugin := New()
	// An informer that is never started never syncs.
	factory := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	genericadmissioninitializer.New(fake.NewClientset(), nil, factory, authorizer.AuthorizerFunc(nil), nil, nil, nil, nil).Initialize(plugin)

	err := plugin.Admit(context.Background(), attributes(admission.Create, "", allowedUser, newEvictionRequest(), nil), nil)
	status, ok := err.(apierrors.APIStatus)
	if !ok || status.Status().Code != http.StatusServiceUnavailable || status.Status().Details.RetryAfterSeconds < 1 {
		t.Fatalf("admission before the pod cache synced: %v, want a 503 with Retry-After", err)
	}
}

func TestValidateInitializationNamesWhatIsMissing(t *testing.T) {
	err := New().ValidateInitialization()
	for _, want := range []string{"pod lister", "kube client", "authorizer"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ValidateInitialization() = %v, want it to name the missing %s", err, want)
		}
	}
}
