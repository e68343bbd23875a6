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
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/evictionrequest/apiserver/internal/localcluster"
	"github.com/evictionrequest/apiserver/pkg/api/participants"
)

// Participants is how a suite's API declares a pod's participants, for
// the checks of the participant rules that both suites run.
type Participants struct {
	// Of lists the participants a pod declares, each as Surge and Own
	// name them: an interceptor's name on our API, "[priority] name" of a
	// responder on lifecycle.k8s.io, as kubectl evictionrequest explain
	// prints them.
	Of func(pod *corev1.Pod) []string
	// Surge is the surge interceptor as its participant rule adds it.
	Surge string
	// DeclareOwn gives a Deployment's pod template a participant of its
	// own, Own.
	DeclareOwn func(dep *appsv1.Deployment)
	Own        string
}

// surgeRule is the surge interceptor's participant rule, as explain names it.
const surgeRule = "the rule surge (MutatingAdmissionPolicy evictionrequest-participants-surge)"

// CheckSurgeRuleSurgesUndeclaredDeployments checks that a one-replica
// Deployment whose pod template says nothing of the surge interceptor, in
// a namespace opted in to the eviction API bridge, gets it from the surge
// interceptor's participant rule as its pod is created, and keeps a ready
// pod through kubectl drain (through the bridge) and through the plugin's
// drain; kubectl evictionrequest explain names the rule. In a namespace
// that did not opt in, the pod is created as written and the same drain
// leaves the Deployment without a ready pod for a while.
func (f *Framework) CheckSurgeRuleSurgesUndeclaredDeployments(t *testing.T, plugin string, p Participants) {
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
				f.OptInToTheBridge(t, ns)
			}
			drained := f.PoolNode(t, ns)
			f.CreateDeployment(t, ns, "db", 1, "", func(dep *appsv1.Deployment) {
				dep.Spec.Template.Annotations = map[string]string{localcluster.ReadyAfterAnnotation: "3s"}
			})
			original := f.PodsOf(t, ns, "db")[0]
			if original.Spec.NodeName != drained {
				t.Fatalf("the pod runs on %s, want %s", original.Spec.NodeName, drained)
			}
			var want []string
			if tc.optIn {
				want = []string{p.Surge}
			}
			_, marked := original.Annotations[participants.MarkPrefix+"surge"]
			if got := p.Of(&original); !slices.Equal(got, want) || marked != tc.optIn {
				t.Fatalf("the pod's participants %v (marked by the surge rule: %v), want %v", got, marked, want)
			}
			if tc.optIn {
				r := f.RunCommand(t, time.Minute, plugin, "explain", "-n", ns, original.Name)
				if !strings.Contains(r.Stdout, p.Surge) || !strings.Contains(r.Stdout, "added by "+surgeRule) || strings.Contains(r.Stdout, "gone") {
					t.Errorf("kubectl evictionrequest explain lacks %q added by %s: %v\n%s%s", p.Surge, surgeRule, r.Err, r.Stdout, r.Stderr)
				}
			}
			f.PoolNode(t, ns)
			w := f.WatchReady(t, ns, "db")
			var r KubectlResult
			if tc.kubectl {
				r = f.RunCommand(t, 4*time.Minute, "kubectl", "drain", drained, "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=3m")
			} else {
				r = f.RunCommand(t, 4*time.Minute, plugin, "drain", drained, "--timeout=150s")
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

// CheckSurgeRuleLeavesAloneDeclaredPods checks that, in a namespace opted
// in to the eviction API bridge, the surge rule leaves alone a
// Deployment's pod that declares a participant of its own (its team chose
// its protection): the pod is created as written, and kubectl
// evictionrequest explain says which rule left it alone and why. A
// Deployment's pod beside it that declares nothing gets the surge
// interceptor.
func (f *Framework) CheckSurgeRuleLeavesAloneDeclaredPods(t *testing.T, plugin string, p Participants) {
	ns := f.NewNamespace(t)
	f.OptInToTheBridge(t, ns)
	f.PoolNode(t, ns)
	f.CreateDeployment(t, ns, "declared", 1, "", p.DeclareOwn)
	f.CreateDeployment(t, ns, "undeclared", 1, "", nil)
	for _, tc := range []struct {
		app  string
		want []string
	}{
		{"declared", []string{p.Own}},
		{"undeclared", []string{p.Surge}},
	} {
		pod := f.PodsOf(t, ns, tc.app)[0]
		_, marked := pod.Annotations[participants.MarkPrefix+"surge"]
		if got := p.Of(&pod); !slices.Equal(got, tc.want) || marked != (tc.app == "undeclared") {
			t.Errorf("the pod of %s declares the participants %v (marked by the surge rule: %v), want %v", tc.app, got, marked, tc.want)
		}
		r := f.RunCommand(t, time.Minute, plugin, "explain", "-n", ns, pod.Name)
		leftAlone := "Left alone by " + surgeRule + ": the pod declares participants of its own"
		if says, want := strings.Contains(r.Stdout, leftAlone), tc.app == "declared"; says != want || r.Err != nil {
			t.Errorf("kubectl evictionrequest explain of the pod of %s says %q: %v, want %v: %v\n%s%s", tc.app, leftAlone, says, want, r.Err, r.Stdout, r.Stderr)
		}
	}
}
