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

package framework

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"

	"github.com/evictionrequest/apiserver/pkg/bridge"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
)

// WaitForQuotaUsage waits until the status of the ResourceQuota ns/name
// says that used of resource are in use: for a quota made after the
// objects it counts, kube-controller-manager's count from its informers,
// which every full sync of the quota then repeats.
func (f *Framework) WaitForQuotaUsage(t testing.TB, ns, name string, resource corev1.ResourceName, used int64) {
	t.Helper()
	Eventually(t, 2*time.Minute, fmt.Sprintf("quota %s to count %d %s", name, used, resource), func(ctx context.Context) error {
		q, err := f.Kube.CoreV1().ResourceQuotas(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got, ok := q.Status.Used[resource]; !ok || got.Value() != used {
			return fmt.Errorf("usage %v", q.Status.Used)
		}
		return nil
	})
}

// CheckAFullQuotaKeepsAProtectedPod is what a full ResourceQuota of
// EvictionRequests does to the eviction API bridge on api, through
// kube-apiserver: in an opted-in namespace whose quota (count/evictionrequests
// of api's group) of one request another requester's request of a pod
// fills, the eviction of a second pod, held by held's interceptor or
// responder, is refused with 429, a Retry-After and a message naming the quota, and the
// pod stays (the bridge once answered an error there, and kube-apiserver's
// failurePolicy Ignore let the eviction through). Once the quota has room,
// the next eviction of the second pod is refused as under way, and the
// bridge's request of it was created with the call's annotations in that
// one write: a watch sees it added with them, and managedFields hold one
// entry of the bridge, its apply. bridgeMetrics scrapes the bridge's
// process, which counts the refusal as failed.
func (f *Framework) CheckAFullQuotaKeepsAProtectedPod(t *testing.T, api evictionapi.API, held PodOptions, bridgeMetrics func() MetricSamples) {
	t.Helper()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	f.MustKubectl(t, "label", "namespace", ns, bridge.NamespaceLabel+"="+bridge.NamespaceOptIn)
	held.Node = f.NewNode(t)
	first, second := f.CreatePod(t, ns, "db-0", held), f.CreatePod(t, ns, "db-1", held)
	const failed = `evictionrequest_eviction_bridge_decisions_total{outcome="` + "failed" + `"}`
	before, _ := bridgeMetrics().Value(failed)

	// Another requester's request of the first pod fills the quota. It is
	// made before the quota, whose usage the test then waits for
	// kube-controller-manager to count: a request made after it is counted
	// by quota admission at once, but the quota controller's next full
	// sync (every 15 s in the harness) counts from its informer's cache,
	// which may not hold the request yet, and wrote the usage back to 0
	// (the bridge's request was then admitted beside the filler's).
	filler, err := participant.New(api, fillerRequester(api), f.Kube, f.Clientset, requester.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := filler.Request(ctx, first, nil); err != nil {
		t.Fatal(err)
	}
	count := corev1.ResourceName("count/evictionrequests." + api.Group())
	quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "one-request"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{count: resource.MustParse("1")}}}
	if _, err := f.Kube.CoreV1().ResourceQuotas(ns).Create(ctx, quota, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.WaitForQuotaUsage(t, ns, quota.Name, count, 1)
	// The quota is full: the second pod stays.
	err = f.evictUntilRefused(t, second, "exceeded quota: one-request")
	for _, want := range []string{"the EvictionRequest for pod " + ns + "/" + second.Name, "could not be created", string(count) + "=1",
		"the pod is not evicted until its request exists"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal %q lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), bridge.Evacuation) {
		t.Errorf("the refusal %q says %q, when nothing is under way", err, bridge.Evacuation)
	}
	if seconds, ok := apierrors.SuggestsClientDelay(err); !ok || seconds < 1 {
		t.Errorf("the refusal suggests a delay of %d s (%v), want a Retry-After", seconds, ok)
	}
	if _, err := f.Kube.CoreV1().Pods(ns).Get(ctx, second.Name, metav1.GetOptions{}); err != nil {
		t.Fatalf("the pod refused for the quota: %v", err)
	}
	if after, _ := bridgeMetrics().Value(failed); after < before+1 {
		t.Errorf("%s went from %v to %v, want at least the refusal of this test", failed, before, after)
	}

	// Room in the quota: the next retry creates the request, annotated in
	// the one write that creates it.
	requests := f.requestMetadata(t, api, ns)
	list, err := requests.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := requests.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	patch := fmt.Sprintf(`{"spec":{"hard":{%q:"2"}}}`, count)
	if _, err := f.Kube.CoreV1().ResourceQuotas(ns).Patch(ctx, quota.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	// Refused while its request is made; what the refusal says is
	// checked there.
	_ = f.evictUntilRefused(t, second, bridge.Evacuation)
	added := firstEventOf(t, w, string(second.UID))
	if added.Type != watch.Added {
		t.Errorf("the first change of the bridge's request is %s, want its creation", added.Type)
	}
	created := added.Object.(*metav1.PartialObjectMetadata)
	if _, err := time.Parse(time.RFC3339, created.Annotations[bridge.LastCallAnnotation]); err != nil || created.Annotations[bridge.CallersAnnotation] == "" {
		t.Errorf("the bridge's request was created with annotations %v, want the call's (%s, %s)",
			created.Annotations, bridge.LastCallAnnotation, bridge.CallersAnnotation)
	}
	current, err := requests.Get(ctx, created.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var writes []string
	for _, e := range current.ManagedFields {
		if e.Manager == bridge.RequesterName(api) {
			writes = append(writes, string(e.Operation))
		}
	}
	if len(writes) != 1 || writes[0] != string(metav1.ManagedFieldsOperationApply) {
		t.Errorf("managedFields of the bridge (%s) on its request: %v, want its one apply", bridge.RequesterName(api), writes)
	}
	if _, err := f.Kube.CoreV1().Pods(ns).Get(ctx, second.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("the pod whose interceptor holds it: %v", err)
	}
}

// fillerRequester is the name of a requester on api that fills a quota.
func fillerRequester(api evictionapi.API) string {
	if api == evictionapi.Lifecycle {
		return "e2e.example.com/quota-filler"
	}
	return "quota-filler.e2e.example.com"
}

// evictUntilRefused evicts pod through kube-apiserver until the answer is
// a 429 that says want, and returns it; an eviction that goes through
// fails the test: every pod it evicts is protected. Each eviction is
// kubectl's (Pods().EvictV1) without client-go's own retries of a 429,
// up to ten Retry-Afters in one call: the test sees every answer.
func (f *Framework) evictUntilRefused(t *testing.T, pod *corev1.Pod, want string) error {
	t.Helper()
	var refusal error
	eviction := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name}}
	Eventually(t, 2*time.Minute, fmt.Sprintf("the eviction of %s refused saying %q", pod.Name, want), func(ctx context.Context) error {
		err := f.Kube.CoreV1().RESTClient().Post().Namespace(pod.Namespace).Resource("pods").Name(pod.Name).SubResource("eviction").
			MaxRetries(0).Body(eviction).Do(ctx).Error()
		switch {
		case err == nil:
			t.Fatalf("the eviction of pod %s/%s, whose interceptor or responder holds it, went through", pod.Namespace, pod.Name)
		case !apierrors.IsTooManyRequests(err) || !strings.Contains(err.Error(), want):
			return fmt.Errorf("eviction: %w", err)
		}
		refusal = err
		return nil
	})
	return refusal
}

// requestMetadata reads the metadata of the EvictionRequests of api in ns.
func (f *Framework) requestMetadata(t *testing.T, api evictionapi.API, ns string) metadata.ResourceInterface {
	t.Helper()
	client, err := metadata.NewForConfig(f.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	gv, err := schema.ParseGroupVersion(string(api))
	if err != nil {
		t.Fatal(err)
	}
	return client.Resource(gv.WithResource("evictionrequests")).Namespace(ns)
}

// firstEventOf is the first event of w on a request whose name starts with
// prefix (the pod's UID, on both APIs).
func firstEventOf(t *testing.T, w watch.Interface, prefix string) watch.Event {
	t.Helper()
	timeout := time.After(time.Minute)
	for {
		select {
		case e, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("the watch of the requests ended")
			}
			if m, isMeta := e.Object.(*metav1.PartialObjectMetadata); isMeta && strings.HasPrefix(m.Name, prefix) {
				return e
			}
		case <-timeout:
			t.Fatalf("no change of a request named %s... in a minute", prefix)
		}
	}
}
