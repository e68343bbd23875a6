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
	"testing"

	corev1 "k8s.io/api/core/v1"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2/ktesting"

	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/sdk/interceptor"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
)

// StartResponder runs an SDK interceptor as the lifecycle.k8s.io responder
// named name, limited to namespace ns, until the test ends.
func (f *Framework) StartResponder(t testing.TB, ns, name string, handler interceptor.Handler) {
	t.Helper()
	i, err := interceptor.New(interceptor.Config{
		Name: name, Namespace: ns, Handler: handler, API: evictionapi.Lifecycle,
		KubeClient: f.Kube, HeartbeatPeriod: HeartbeatPeriod,
	})
	if err != nil {
		t.Fatal(err)
	}
	f.run(t, name, i)
}

// run runs i until the test ends.
func (f *Framework) run(t testing.TB, name string, i *interceptor.Interceptor) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- i.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("interceptor %s: %v", name, err)
		}
	})
}

// NewLifecycleRequester is an SDK requester of lifecycle.k8s.io named
// name, as the cluster admin; opts are its options, the defaults when
// none.
func (f *Framework) NewLifecycleRequester(t testing.TB, name string, opts ...requester.Options) *requester.Lifecycle {
	t.Helper()
	o := requester.Options{}
	if len(opts) > 0 {
		o = opts[0]
	}
	r, err := requester.NewLifecycle(name, f.Kube, o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// RequestEviction requests the eviction of pod as requester and returns
// the request.
func RequestEviction(t testing.TB, r *requester.Lifecycle, pod *corev1.Pod) *lifecyclev1alpha1.EvictionRequest {
	t.Helper()
	er, err := r.Request(t.Context(), pod)
	if err != nil {
		t.Fatalf("requesting the eviction of pod %s as %s: %v", pod.Name, r.Name(), err)
	}
	return er
}

// ConditionIs is a condition of WaitForEviction: the condition t has
// status true and reason.
func ConditionIs(t lifecyclev1alpha1.EvictionConditionType, reason lifecyclev1alpha1.EvictionConditionReason) func(*lifecyclev1alpha1.Eviction) error {
	return func(ev *lifecyclev1alpha1.Eviction) error {
		c := lifecycleutil.Condition(ev.Status.Conditions, t)
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != string(reason) {
			return fmt.Errorf("condition %s is %+v, want True with reason %s", t, c, reason)
		}
		return nil
	}
}

// ResponderIs is a condition of WaitForEviction: the responder name is in
// state.
func ResponderIs(name string, state lifecyclev1alpha1.ResponderStateType) func(*lifecyclev1alpha1.Eviction) error {
	return func(ev *lifecyclev1alpha1.Eviction) error {
		tr := lifecycleutil.TargetResponder(ev, name)
		if tr == nil || tr.State != state {
			return fmt.Errorf("responder %s is %+v, want %s (responders %+v)", name, tr, state, ev.Status.TargetResponders)
		}
		return nil
	}
}
