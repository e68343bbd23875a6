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
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	genericadmissioninitializer "k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/internal/cachetest"
	"github.com/evictionrequest/apiserver/internal/wrappers"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination"
	"github.com/evictionrequest/apiserver/pkg/util/cachetransform"
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
	return newPluginWith(t, authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		if a.GetUser().GetName() == allowedUser && a.GetVerb() == "delete" && a.GetResource() == "pods" && a.GetAPIGroup() == "" {
			return authorizer.DecisionAllow, "", nil
		}
		return authorizer.DecisionNoOpinion, "no RBAC rule allows it", nil
	}), cached, live)
}

// newPluginWith is newPlugin with the authorizer authz.
func newPluginWith(t *testing.T, authz authorizer.Authorizer, cached, live []runtime.Object) *Plugin {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)

	// Pods cached as the server caches them.
	factory := cachetest.KubeInformers(fake.NewClientset(cached...), cachetransform.TrimPodKeeping(PodAnnotationsRead...))
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
