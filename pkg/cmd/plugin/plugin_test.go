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

package plugin

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
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/drain"
	erfake "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned/fake"
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
	req, err := requester.New(DefaultRequesterName, evr, kube.CoreV1(), requester.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := &bytes.Buffer{}
	return &Options{
		IOStreams: genericiooptions.IOStreams{Out: out, ErrOut: out},
		Requester: DefaultRequesterName, CallTimeout: time.Second,
		kube: kube, evr: evr, requester: req, namespace: "shop",
	}, out, kube, evr
}

func testPod(name, node string, mutate ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: types.UID("uid-" + name)},
		Spec:       corev1.PodSpec{NodeName: node},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
	for _, m := range mutate {
		m(p)
	}
	return p
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

func TestDrainRefusesBadInputAndChangesNothing(t *testing.T) {
	nodes := []runtime.Object{
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "empty"}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "busy"}},
		testPod("web-0", "busy"),
	}
	for _, tc := range []struct {
		name  string
		nodes []string
		deny  []string
		want  []string
	}{
		{"a missing node", []string{"busy", "gone"}, nil, []string{`node "gone" not found`, "nothing was changed"}},
		{"a node with no pods", []string{"busy", "empty"}, nil, []string{"node empty has no pods", "nothing was changed"}},
		{"no permission to cordon", []string{"busy"}, []string{"patch nodes"}, []string{"you are not allowed to", "patch nodes (to cordon the nodes)", "nothing was changed"}},
		{"no permission to delete the pods", []string{"busy"}, []string{"delete pods"}, []string{"delete pods in namespace shop", "nothing was changed"}},
		{"no permission to write requests", []string{"busy"}, []string{"patch evictionrequests"}, []string{"patch evictionrequests.coordination.k8s.io in namespace shop"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, _, kube, evr := testOptions(t, nodes, nil, tc.deny...)
			d := &DrainOptions{Options: o, Nodes: tc.nodes, Cordon: true}
			_, err := d.prepare(context.Background())
			if err == nil {
				t.Fatal("prepare() accepted it")
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			if w := append(writes(kube), writes(evr)...); len(w) > 0 {
				t.Errorf("bad input made writes %v", w)
			}
		})
	}
}

func TestDrainSelectsAndReportsSkippedPods(t *testing.T) {
	o, out, _, _ := testOptions(t, []runtime.Object{
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "busy"}},
		testPod("web-0", "busy"), testPod("web-1", "busy"),
		testPod("fluentd-x", "busy", func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "fluentd", UID: "ds", Controller: ptr.To(true)}}
		}),
		testPod("etcd-busy", "busy", func(p *corev1.Pod) { p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"} }),
	}, nil)
	d := &DrainOptions{Options: o, Nodes: []string{"busy"}}
	selections, err := d.prepare(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	d.printSkipped("busy", selections["busy"])
	if got := len(selections["busy"].Evict); got != 2 {
		t.Errorf("%d pods to evict, want 2", got)
	}
	for _, want := range []string{
		"Warning: node busy: skipping DaemonSet-managed pods: shop/fluentd-x",
		"Warning: node busy: skipping mirror pods: shop/etcd-busy",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestLinePrinterPrintsChangesOnly(t *testing.T) {
	var out bytes.Buffer
	p := newLinePrinter(&out)
	hb := now.Add(-10 * time.Second)
	intercepted := drain.PodProgress{Namespace: "shop", Name: "db-0", State: drain.StateIntercepted, ActiveInterceptor: "migrator.example.com", LastHeartbeat: &hb, Message: "copying"}
	evicting := drain.PodProgress{Namespace: "shop", Name: "web-0", State: drain.StateEvicting, HasRequest: true}
	pods := []drain.PodProgress{intercepted, evicting}
	p.update(drain.Summarize(pods), pods, now)
	first := out.String()
	for _, want := range []string{
		"pod shop/db-0: Intercepted: interceptor migrator.example.com is active, last heartbeat 10s ago: copying\n",
		"pod shop/web-0: Evicting\n",
		"0/2 pods gone, 1 intercepted, 1 evicting\n",
	} {
		if !strings.Contains(first, want) {
			t.Errorf("first output lacks %q:\n%s", want, first)
		}
	}

	// Only ages changed: nothing is printed.
	out.Reset()
	p.update(drain.Summarize(pods), pods, now.Add(time.Minute))
	if out.Len() != 0 {
		t.Errorf("printed %q although only ages changed", out.String())
	}

	// web-0 is gone; later messages of a gone pod are not repeated.
	gone := drain.PodProgress{Namespace: "shop", Name: "web-0", State: drain.StateGone, HasRequest: true, Message: "Pod web-0 was deleted."}
	pods = []drain.PodProgress{intercepted, gone}
	p.update(drain.Summarize(pods), pods, now)
	if got, want := out.String(), "pod shop/web-0: Gone\n1/2 pods gone, 1 intercepted\n"; got != want {
		t.Errorf("output %q, want %q", got, want)
	}
	out.Reset()
	gone.RequestComplete, gone.Message = true, "Completed."
	pods = []drain.PodProgress{intercepted, gone}
	p.update(drain.Summarize(pods), pods, now)
	if out.Len() != 0 {
		t.Errorf("printed %q for a pod already gone", out.String())
	}
}

func TestTablePrinterRedrawsInPlace(t *testing.T) {
	var out bytes.Buffer
	p := &tablePrinter{out: &out, maxRows: 2}
	hb := now.Add(-3 * time.Second)
	finish := now.Add(2 * time.Minute)
	pods := []drain.PodProgress{
		{Namespace: "shop", Name: "a", State: drain.StateIntercepted, ActiveInterceptor: "m.example.com", LastHeartbeat: &hb, ExpectedFinish: &finish, Message: "copying"},
		{Namespace: "shop", Name: "b", State: drain.StateBlocked, FailedEvictions: 4, BlockingPDBs: []string{"web"}},
		{Namespace: "shop", Name: "c", State: drain.StateEvicting},
		{Namespace: "shop", Name: "d", State: drain.StateGone},
	}
	p.update(drain.Summarize(pods), pods, now)
	first := out.String()
	for _, want := range []string{"1/4 pods gone", "POD", "shop/a", "m.example.com", "3s ago", "in 2m", "copying", "shop/b", "PodDisruptionBudget web allows no disruption", "… and 1 more"} {
		if !strings.Contains(first, want) {
			t.Errorf("table lacks %q:\n%s", want, first)
		}
	}
	if strings.Contains(first, "shop/d") {
		t.Errorf("the table shows a settled pod:\n%s", first)
	}
	out.Reset()
	p.update(drain.Summarize(pods), pods, now)
	if !strings.HasPrefix(out.String(), "\x1b[5A\r\x1b[J") {
		t.Errorf("the second drawing does not first clear the 5 lines of the first: %q", out.String()[:10])
	}
}

func TestWithdrawUnderForbidChangesNothing(t *testing.T) {
	pods := []runtime.Object{testPod("web-0", "n"), testPod("db-0", "n")}
	request := func(name string, policy v1alpha1.EvictionRequestCancellationPolicy) *v1alpha1.EvictionRequest {
		return &v1alpha1.EvictionRequest{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "uid-" + name},
			Spec: v1alpha1.EvictionRequestSpec{
				Target:     v1alpha1.EvictionTarget{PodRef: &v1alpha1.LocalPodReference{Name: name, UID: "uid-" + name}},
				Requesters: []v1alpha1.Requester{{Name: DefaultRequesterName}},
			},
			Status: v1alpha1.EvictionRequestStatus{EvictionRequestCancellationPolicy: ptr.To(policy), ActiveInterceptorName: ptr.To("migrator.example.com")},
		}
	}
	o, _, _, evr := testOptions(t, pods, []runtime.Object{request("web-0", v1alpha1.Allow), request("db-0", v1alpha1.Forbid)})
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
	o, out, _, evr := testOptions(t, []runtime.Object{testPod("web-0", "n")}, nil)
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

func TestStatusShowsTheInterceptorChain(t *testing.T) {
	hb := metav1.NewTime(now.Add(-12 * time.Second))
	er := &v1alpha1.EvictionRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "uid-db-0", CreationTimestamp: metav1.NewTime(now.Add(-time.Minute))},
		Spec: v1alpha1.EvictionRequestSpec{
			Target:       v1alpha1.EvictionTarget{PodRef: &v1alpha1.LocalPodReference{Name: "db-0", UID: "uid-db-0"}},
			Requesters:   []v1alpha1.Requester{{Name: "a.example.com"}, {Name: "b.example.com"}},
			Interceptors: []v1alpha1.Interceptor{{Name: "fallback.example.com"}, {Name: "operator.example.com"}, {Name: "migrator.example.com"}},
		},
		Status: v1alpha1.EvictionRequestStatus{
			ActiveInterceptorName: ptr.To("operator.example.com"), HeartbeatTime: &hb, Message: "draining connections",
			EvictionRequestCancellationPolicy: ptr.To(v1alpha1.Forbid),
		},
	}
	o, out, _, _ := testOptions(t, nil, nil)
	s := &StatusOptions{Options: o, Events: 5}
	s.print(out, statusEntry{er: er, pod: testPod("db-0", "node-a")}, now)
	for _, want := range []string{
		"Pod:", "db-0 (node node-a)",
		"State:", "Intercepted",
		"a.example.com, b.example.com",
		"[2] migrator.example.com  done",
		"[1] operator.example.com  active, heartbeat 12s ago, ETA -",
		"[0] fallback.example.com  waiting",
		"draining connections", "Forbid", "0 failed", "Events:  <none>",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
}
