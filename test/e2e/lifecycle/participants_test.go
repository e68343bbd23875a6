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

package lifecycle

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/internal/localcluster"
	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/api/participants"
	"github.com/evictionrequest/apiserver/pkg/surge"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// surgeResponder is the responder the surge interceptor's participant
// rule adds, as the lifecycle overlay renders it.
var surgeResponder = corev1.EvictionResponder{Name: surge.DefaultLifecycleName, Priority: ptr.To(lifecycleutil.ManagingControllerPriority)}

// On lifecycle.k8s.io, a one-replica Deployment whose pod template
// declares no responder, in a namespace opted in to the eviction API
// bridge, gets the surge interceptor in spec.evictionResponders from its
// participant rule as its pod is created, and keeps a ready pod through
// kubectl drain (through the bridge) and the plugin's drain. In a
// namespace that did not opt in, the pod is created as written and the
// drain leaves the Deployment without a ready pod for a while.
func TestParticipantRuleSurgesUndeclaredDeployments(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		optIn   bool
		kubectl bool
		wantMin int
	}{
		{"kubectl drain, opted in", true, true, 1},
		{"plugin drain, opted in", true, false, 1},
		{"plugin drain, not opted in", false, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ns := f.NewNamespace(t)
			if tc.optIn {
				optIn(t, ns)
			}
			drained := f.PoolNode(t, ns)
			f.CreateDeployment(t, ns, "db", 1, "", func(dep *appsv1.Deployment) {
				dep.Spec.Template.Annotations = map[string]string{localcluster.ReadyAfterAnnotation: "3s"}
			})
			original := f.PodsOf(t, ns, "db")[0]
			if original.Spec.NodeName != drained {
				t.Fatalf("the pod runs on %s, want %s", original.Spec.NodeName, drained)
			}
			var want []corev1.EvictionResponder
			if tc.optIn {
				want = []corev1.EvictionResponder{surgeResponder}
			}
			_, marked := original.Annotations[participants.MarkPrefix+"surge"]
			if !equalResponders(original.Spec.EvictionResponders, want) || marked != tc.optIn {
				t.Fatalf("the pod's responders %v (marked %v), want %v", original.Spec.EvictionResponders, marked, want)
			}
			if tc.optIn {
				r := f.RunCommand(t, time.Minute, pluginBinary, "explain", "-n", ns, original.Name)
				if want := "[10000] " + surge.DefaultLifecycleName; !strings.Contains(r.Stdout, want) || !strings.Contains(r.Stdout, "added by the rule surge") {
					t.Errorf("kubectl evictionrequest explain lacks %q added by the rule surge: %v\n%s%s", want, r.Err, r.Stdout, r.Stderr)
				}
			}
			f.PoolNode(t, ns)
			w := f.WatchReady(t, ns, "db")
			var r framework.KubectlResult
			if tc.kubectl {
				r = f.RunCommand(t, 4*time.Minute, "kubectl", "drain", drained, "--ignore-daemonsets", "--timeout=3m")
			} else {
				r = f.RunCommand(t, 4*time.Minute, pluginBinary, "drain", drained, "--timeout=150s")
			}
			if r.Err != nil {
				t.Fatalf("the drain failed: %v\n%s%s", r.Err, r.Stdout, r.Stderr)
			}
			f.WaitForReplicas(t, ns, "db", 1)
			w.Stop()
			if minReady, _ := w.Extremes(); minReady != tc.wantMin {
				t.Errorf("the fewest ready pods during the drain: %d, want %d", minReady, tc.wantMin)
			}
		})
	}
}

func equalResponders(got, want []corev1.EvictionResponder) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i].Name != want[i].Name || ptr.Deref(got[i].Priority, 0) != ptr.Deref(want[i].Priority, 0) {
			return false
		}
	}
	return true
}

// On lifecycle.k8s.io, in a namespace opted in to the eviction API
// bridge, the surge rule leaves alone a Deployment's pod that declares a
// responder of its own (its team chose its protection): the pod is
// created as written, and kubectl evictionrequest explain says which rule
// left it alone and why. A Deployment's pod beside it that declares
// nothing gets the surge interceptor's responder.
func TestParticipantRuleLeavesAlonePodsThatDeclareTheirOwn(t *testing.T) {
	t.Parallel()
	own := corev1.EvictionResponder{Name: "example.com/operator", Priority: ptr.To[int32](5000)}
	ns := f.NewNamespace(t)
	optIn(t, ns)
	f.PoolNode(t, ns)
	f.CreateDeployment(t, ns, "declared", 1, "", func(dep *appsv1.Deployment) {
		dep.Spec.Template.Spec.EvictionResponders = []corev1.EvictionResponder{own}
	})
	f.CreateDeployment(t, ns, "undeclared", 1, "", nil)
	for _, tc := range []struct {
		app  string
		want []corev1.EvictionResponder
	}{
		{"declared", []corev1.EvictionResponder{own}},
		{"undeclared", []corev1.EvictionResponder{surgeResponder}},
	} {
		pod := f.PodsOf(t, ns, tc.app)[0]
		_, marked := pod.Annotations[participants.MarkPrefix+"surge"]
		if !equalResponders(pod.Spec.EvictionResponders, tc.want) || marked != (tc.app == "undeclared") {
			t.Errorf("the pod of %s declares the responders %s (marked by the surge rule: %v), want %s", tc.app, describeResponders(pod.Spec.EvictionResponders), marked, describeResponders(tc.want))
		}
		r := f.RunCommand(t, time.Minute, pluginBinary, "explain", "-n", ns, pod.Name)
		const leftAlone = "Left alone by the rule surge (MutatingAdmissionPolicy evictionrequest-participants-surge): the pod declares participants of its own"
		if says, want := strings.Contains(r.Stdout, leftAlone), tc.app == "declared"; says != want || r.Err != nil {
			t.Errorf("kubectl evictionrequest explain of the pod of %s says %q: %v, want %v: %v\n%s%s", tc.app, leftAlone, says, want, r.Err, r.Stdout, r.Stderr)
		}
	}
}

// describeResponders lists responders as name=priority.
func describeResponders(responders []corev1.EvictionResponder) string {
	described := make([]string, 0, len(responders))
	for _, r := range responders {
		described = append(described, fmt.Sprintf("%s=%d", r.Name, ptr.Deref(r.Priority, 0)))
	}
	return "[" + strings.Join(described, " ") + "]"
}
