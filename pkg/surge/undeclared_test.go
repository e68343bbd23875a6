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
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/sdk/interceptor"
)

// lifecycleName is the Surger's responder name in the lifecycle.k8s.io
// cases.
const lifecycleName = "surge.example.com/surge"

// asAPI makes f's Surger answer on api, under the name of that API.
func (f *fixture) asAPI(api evictionapi.API) string {
	f.surger.cfg.API = api
	if api == evictionapi.Lifecycle {
		f.surger.cfg.Name = lifecycleName
	}
	return f.surger.cfg.Name
}

// declaring makes the pod template of dep name the participant name, on
// api, as a Deployment whose owner asked for it does.
func declaring(api evictionapi.API, name string) func(*appsv1.Deployment) {
	return func(dep *appsv1.Deployment) {
		if api == evictionapi.Lifecycle {
			dep.Spec.Template.Spec.EvictionResponders = []corev1.EvictionResponder{wrappers.Responder(name, lifecycleutil.ManagingControllerPriority)}
			return
		}
		dep.Spec.Template.Annotations = map[string]string{"evictionrequest.coordination.k8s.io/interceptors": name}
	}
}

// replicas sets the Deployment's replica count.
func replicas(n int32) func(*appsv1.Deployment) {
	return func(dep *appsv1.Deployment) { dep.Spec.Replicas = ptr.To(n) }
}

// The surge interceptor a participant rule gave to every pod of the
// Deployments of a namespace (docs/participants.md) protects the ones it
// can, one-replica Deployments, and those whose template asks for it; it
// passes every other pod on at once, on its first call, with the reason,
// without writing a Deployment, on both APIs.
func TestHandlePassesOnAtOnceWhatItWasGivenAndCannotProtect(t *testing.T) {
	for _, api := range []evictionapi.API{evictionapi.Coordination, evictionapi.Lifecycle} {
		for _, tc := range []struct {
			name string
			// deployment changes the one-replica Deployment web; nil
			// makes the pod a StatefulSet's.
			deployment   func(name string) []func(*appsv1.Deployment)
			statefulSet  bool
			bare         bool
			wantDeclined string
			wantEvents   []string
		}{
			{name: "a one-replica Deployment that does not name it", deployment: func(string) []func(*appsv1.Deployment) { return nil },
				wantEvents: []string{EventSurgeStarted}},
			{name: "three replicas, the template names it", deployment: func(name string) []func(*appsv1.Deployment) {
				return []func(*appsv1.Deployment){replicas(3), declaring(api, name)}
			}, wantEvents: []string{EventSurgeStarted}},
			{name: "three replicas, the template does not name it", deployment: func(string) []func(*appsv1.Deployment) {
				return []func(*appsv1.Deployment){replicas(3)}
			}, wantDeclined: "Deployment web: it has 3 replicas and its pod template does not name ", wantEvents: []string{EventSurgePassedOn}},
			{name: "a Deployment scaled to zero", deployment: func(string) []func(*appsv1.Deployment) {
				return []func(*appsv1.Deployment){replicas(0)}
			}, wantDeclined: "it has 0 replicas", wantEvents: []string{EventSurgePassedOn}},
			{name: "a StatefulSet's pod", statefulSet: true, wantDeclined: "is not controlled by a Deployment"},
			{name: "a bare pod", bare: true, wantDeclined: "is not controlled by a Deployment"},
		} {
			t.Run(string(api)+"/"+tc.name, func(t *testing.T) {
				f := newFixture(t)
				name := f.asAPI(api)
				var pod *corev1.Pod
				switch {
				case tc.statefulSet:
					pod = wrappers.MakePod("db-0").OwnedBy("apps/v1", "StatefulSet", "db", "uid-db").Ready(start.Add(-time.Hour)).Obj()
					f.add(pod)
				case tc.bare:
					pod = wrappers.MakePod("job-0").Ready(start.Add(-time.Hour)).Obj()
					f.add(pod)
				default:
					dep := wrappers.MakeDeployment("web").Obj()
					for _, mutate := range tc.deployment(name) {
						mutate(dep)
					}
					rs := wrappers.MakeReplicaSet("web-abc", ptr.Deref(dep.Spec.Replicas, 1)).OwnedBy(dep).Obj()
					pod = wrappers.MakePod("web-0").Label("app", "web").OwnedByReplicaSet(rs).Node("node-a").Ready(start.Add(-time.Hour)).Obj()
					f.add(dep, rs, pod)
				}
				f.kube.ClearActions()

				result, _ := f.handle(pod)
				if tc.wantDeclined == "" {
					expectRequeue(t, result)
				} else {
					if result.Outcome != interceptor.Declined || !strings.Contains(result.Message, tc.wantDeclined) {
						t.Errorf("Handle() = %+v, want the request passed on at once, saying %q", result, tc.wantDeclined)
					}
					if writes := fieldManagers(f.kube.Actions(), "deployments"); len(writes) > 0 {
						t.Errorf("passing the request on wrote the Deployment (%v)", writes)
					}
				}
				if tc.wantDeclined != "" && !tc.statefulSet && !tc.bare && !strings.Contains(result.Message, name) {
					t.Errorf("the message %q does not name the interceptor %s", result.Message, name)
				}
				if diff := cmp.Diff(tc.wantEvents, f.events()); diff != "" {
					t.Errorf("events (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// On lifecycle.k8s.io, the responder the surge interceptor runs as
// completes its entry of the pod's Eviction at once for a pod it passes
// on, with the reason, so that the next responder (the evictor) takes its
// turn without waiting for a heartbeat deadline.
func TestResponderCompletesItsEntryForAPodItPassesOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t)
		name := f.asAPI(evictionapi.Lifecycle)
		dep := wrappers.MakeDeployment("web").Replicas(ptr.To[int32](3)).Obj()
		rs := wrappers.MakeReplicaSet("web-abc", 3).OwnedBy(dep).Obj()
		pod := wrappers.MakePod("web-0").Label("app", "web").OwnedByReplicaSet(rs).Node("node-a").Ready(start.Add(-time.Hour)).Obj()
		f.add(dep, rs, pod)
		ev := wrappers.MakeEviction("pod-1-web-0", pod).Label(name, string(lifecyclev1alpha1.EvictionParticipantRoleResponder)).
			TargetResponder(name, lifecycleutil.ManagingControllerPriority, lifecyclev1alpha1.ResponderStateActive).
			TargetResponder(lifecycleutil.Evictor, lifecycleutil.EvictorPriority, lifecyclev1alpha1.ResponderStateInactive).
			Started(name, start).Obj()
		if err := f.kube.Tracker().Add(ev); err != nil {
			t.Fatal(err)
		}
		i, err := interceptor.New(interceptor.Config{Name: name, API: evictionapi.Lifecycle, KubeClient: f.kube, Handler: f.surger.Handle, Clock: f.clock})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(f.ctx)
		done := make(chan error, 1)
		go func() { done <- i.Run(ctx) }()
		// The SDK's caches sync (polled), then the handler runs once.
		synctest.Wait()
		time.Sleep(time.Second)
		synctest.Wait()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run() = %v", err)
		}

		got, err := f.kube.LifecycleV1alpha1().Evictions(ev.Namespace).Get(t.Context(), ev.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		status := lifecycleutil.ResponderStatus(got, name)
		if status == nil || status.CompletionTime == nil || !strings.Contains(ptr.Deref(status.Message, ""), "it has 3 replicas and its pod template does not name "+name) {
			t.Errorf("the responder's entry is %+v, want it completed at once with the reason", status)
		}
	})
}
