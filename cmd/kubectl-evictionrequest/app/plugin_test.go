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

package app

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/cmd/options"
	erfake "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned/fake"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
)

var now = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// testOptions are plugin options on fake clientsets; deny lists the
// "verb resource" pairs the access review refuses.
func testOptions(t *testing.T, kubeObjects []runtime.Object, requests []runtime.Object, deny ...string) (*Options, *bytes.Buffer, *k8sfake.Clientset, *erfake.Clientset) {
	t.Helper()
	kube := k8sfake.NewClientset(kubeObjects...)
	kube.PrependReactor("create", "selfsubjectaccessreviews", func(action clienttesting.Action) (bool, runtime.Object, error) {
		review := action.(clienttesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview)
		attrs := review.Spec.ResourceAttributes
		review.Status.Allowed = true
		for _, d := range deny {
			if d == attrs.Verb+" "+attrs.Resource {
				review.Status.Allowed = false
			}
		}
		return true, review, nil
	})
	evr := erfake.NewClientset(requests...)
	p, err := participant.New(evictionapi.Coordination, DefaultRequesterName, kube, evr, requester.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := &bytes.Buffer{}
	return &Options{
		IOStreams: genericiooptions.IOStreams{Out: out, ErrOut: out},
		Requester: DefaultRequesterName, Client: &options.ClientOptions{QPS: 50, Burst: 100, CallTimeout: time.Second},
		kube: kube, evr: evr, participant: p, namespace: "shop",
	}, out, kube, evr
}

// testLifecycleOptions are plugin options speaking lifecycle.k8s.io on a
// fake clientset.
func testLifecycleOptions(t *testing.T, kubeObjects ...runtime.Object) (*Options, *bytes.Buffer, *k8sfake.Clientset) {
	t.Helper()
	o, out, kube, _ := testOptions(t, kubeObjects, nil)
	p, err := participant.New(evictionapi.Lifecycle, DefaultLifecycleRequesterName, kube, nil, requester.Options{})
	if err != nil {
		t.Fatal(err)
	}
	o.participant = p
	return o, out, kube
}

// testPod is a running pod of namespace shop on node.
func testPod(name, node string) *wrappers.PodWrapper {
	return wrappers.MakePod(name).Node(node)
}

func writes(client interface{ Actions() []clienttesting.Action }) []string {
	var w []string
	for _, a := range client.Actions() {
		switch a.GetVerb() {
		case "get", "list", "watch":
		default:
			if a.GetResource().Resource != "selfsubjectaccessreviews" {
				w = append(w, a.GetVerb()+" "+a.GetResource().Resource)
			}
		}
	}
	return w
}

func TestWithdrawUnderForbidChangesNothing(t *testing.T) {
	web, db := testPod("web-0", "n").Obj(), testPod("db-0", "n").Obj()
	request := func(pod *corev1.Pod, policy v1alpha1.EvictionRequestCancellationPolicy) *v1alpha1.EvictionRequest {
		return wrappers.MakeEvictionRequest(pod, DefaultRequesterName).Policy(policy).Active("migrator.example.com").Obj()
	}
	o, _, _, evr := testOptions(t, []runtime.Object{web, db}, []runtime.Object{request(web, v1alpha1.Allow), request(db, v1alpha1.Forbid)})
	p := &PodsOptions{Options: o, Pods: []string{"web-0", "db-0"}}
	err := p.RunWithdraw(context.Background())
	if err == nil || !strings.Contains(err.Error(), "interceptor migrator.example.com set the cancellation policy") || !strings.Contains(err.Error(), "nothing was changed") {
		t.Fatalf("RunWithdraw() = %v", err)
	}
	if w := writes(evr); len(w) > 0 {
		t.Errorf("writes %v although one request forbids cancellation", w)
	}
}

func TestRequestAndWithdraw(t *testing.T) {
	o, out, _, evr := testOptions(t, []runtime.Object{testPod("web-0", "n").Obj()}, nil)
	p := &PodsOptions{Options: o, Pods: []string{"web-0"}}
	if err := p.RunRequest(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "pod/web-0: eviction requested (evictionrequest/uid-web-0)") {
		t.Errorf("output %q", out)
	}
	out.Reset()
	if err := p.RunWithdraw(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "pod/web-0: withdrew from evictionrequest/uid-web-0 (the request is canceled)") {
		t.Errorf("output %q", out)
	}
	er, err := evr.CoordinationV1alpha1().EvictionRequests("shop").Get(context.Background(), "uid-web-0", metav1.GetOptions{})
	if err != nil || len(er.Spec.Requesters) != 0 {
		t.Errorf("request after the withdrawal: %v, %v", er, err)
	}
	p.Pods = []string{"missing"}
	if err := p.RunRequest(context.Background()); err == nil || !strings.Contains(err.Error(), `pod "missing" not found in namespace shop`) {
		t.Errorf("RunRequest() of a missing pod = %v", err)
	}
}
