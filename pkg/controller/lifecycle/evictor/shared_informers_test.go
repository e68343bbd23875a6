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

package evictor

import (
	"context"
	"testing"
	"testing/synctest"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"

	"github.com/evictionrequest/apiserver/internal/cachetest"
	"github.com/evictionrequest/apiserver/internal/wrappers"
	"github.com/evictionrequest/apiserver/pkg/util/cachetransform"
)

// With the eviction API bridge, evictionrequest-controller's informers
// outlive each leadership term: an evictor of an ended term, closed, takes
// no more events, while one of the current term does.
func TestAClosedEvictorTakesNoMoreEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, ctx := ktesting.NewTestContext(t)
		kube := k8sfake.NewClientset()
		factory := cachetest.KubeInformers(kube, cachetransform.TrimPodsStripManagedFieldsBut(PodAnnotationsRead, ManagersTakenOver...))
		if err := RegisterInformers(factory); err != nil {
			t.Fatal(err)
		}
		build := func() *Controller {
			c, err := NewController(ctx, kube, factory.Lifecycle().V1alpha1().Evictions(), factory.Core().V1().Pods(), clock.RealClock{}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		ended, current := build(), build()
		ended.Close(ctx)
		defer current.Close(ctx)
		stop, cancel := context.WithCancel(ctx)
		factory.Start(stop.Done())
		defer factory.Shutdown()
		defer cancel()
		ev := turn(wrappers.MakePod("web").Obj()).Obj()
		if _, err := kube.LifecycleV1alpha1().Evictions(ev.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if n := current.queue.Len(); n != 1 {
			t.Fatalf("the current term's evictor queued %d Evictions, want 1", n)
		}
		if n := ended.queue.Len(); n != 0 {
			t.Errorf("the closed evictor queued %d Evictions, want none", n)
		}
		ended.queue.ShutDown()
		current.queue.ShutDown()
	})
}
