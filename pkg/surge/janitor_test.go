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

package surge

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	erfake "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned/fake"
)

// The janitor undoes only what its own interceptor did: surge
// interceptors of other names share the cluster, and a surge or a lowered
// deletion cost of theirs must survive it even though this interceptor
// does not hold their requests.
func TestJanitorUndoesOnlyItsOwnSurges(t *testing.T) {
	const ours, theirs = "surge-a.example.com", "surge-b.example.com"
	surged := func(name, interceptor string, uid types.UID) *appsv1.Deployment {
		d := deployment(func(d *appsv1.Deployment) { d.Name, d.UID = name, types.UID(name) })
		d, err := applyState(d, &State{Interceptor: interceptor, OriginalReplicas: 1, Available: 1, Pods: map[types.UID]string{uid: string(uid)}})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	marked := func(uid types.UID, by string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: string(uid), UID: uid, Annotations: map[string]string{
			DeletionCostAnnotation: lowestDeletionCost, OriginalDeletionCostAnnotation: "7", MarkedByAnnotation: by,
		}}}
	}
	// Every pod's request is gone (withdrawn), so nobody holds any: only
	// who surged or marked decides.
	kube := kubefake.NewClientset(
		surged("web-ours", ours, "ours-0"), surged("web-theirs", theirs, "theirs-0"),
		marked("ours-0", ours), marked("theirs-0", theirs), marked("ours-marked-1", ours), marked("theirs-marked-1", theirs),
	)
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	factory := informers.NewSharedInformerFactory(kube, 0)
	s := New(Config{
		Name: ours, Kube: kube, EvictionRequests: erfake.NewClientset(), Informers: factory,
		Recorder: record.NewFakeRecorder(10), Clock: testingclock.NewFakeClock(time.Now()), CallTimeout: time.Second,
	})
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	defer cancel()
	if !s.WaitForCacheSync(ctx) {
		t.Fatal("caches did not sync")
	}

	s.cleanUp(ctx)

	for name, want := range map[string]int32{"web-ours": 1, "web-theirs": 2} {
		dep, err := kube.AppsV1().Deployments("shop").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_, surging := dep.Annotations[StateAnnotation]
		if got := ptr.Deref(dep.Spec.Replicas, 0); got != want || surging != (want == 2) {
			t.Errorf("Deployment %s: %d replicas, surge annotation %v; want %d replicas, the surge kept only if it is another interceptor's", name, got, surging, want)
		}
	}
	for name, want := range map[string]map[string]string{
		"ours-0":          {DeletionCostAnnotation: "7"},
		"ours-marked-1":   {DeletionCostAnnotation: "7"},
		"theirs-0":        marked("theirs-0", theirs).Annotations,
		"theirs-marked-1": marked("theirs-marked-1", theirs).Annotations,
	} {
		pod, err := kube.CoreV1().Pods("shop").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, pod.Annotations); diff != "" {
			t.Errorf("annotations of pod %s (-want +got):\n%s", name, diff)
		}
	}
}
