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

package controllermanager

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	componentbaseconfig "k8s.io/component-base/config"
	"k8s.io/klog/v2/ktesting"

	"github.com/evictionrequest/apiserver/internal/cachetest"
)

// handlerController registers a handler on the pod informer of its context
// when it is built and removes it when it is closed or stops running, as
// the controllers of evictionrequest-apiserver do on its shared pod cache.
type handlerController struct {
	informer     cache.SharedIndexInformer
	registration cache.ResourceEventHandlerRegistration
	// live counts the handlers registered and not removed.
	live *atomic.Int32
}

func handlerControllerInit(live *atomic.Int32) InitFunc {
	return func(_ context.Context, cc *Context) (Controller, error) {
		informer := cc.Informers.Core().V1().Pods().Informer()
		registration, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{})
		if err != nil {
			return nil, err
		}
		live.Add(1)
		return &handlerController{informer: informer, registration: registration, live: live}, nil
	}
}

func (c *handlerController) Run(ctx context.Context) error {
	defer c.Close(ctx)
	<-ctx.Done()
	return nil
}

func (c *handlerController) Close(context.Context) {
	if err := c.informer.RemoveEventHandler(c.registration); err == nil {
		c.live.Add(-1)
	}
}

func failing(context.Context, *Context) (Controller, error) {
	return nil, errors.New("cannot start")
}

// When a controller of a term cannot be built, the ones built before it
// leave no handler on the process's shared informers, which outlive the
// term: each new term would otherwise add another.
func TestAControllerThatCannotStartLeavesNoHandlerBehind(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	client := kubefake.NewClientset()
	shared := cachetest.KubeInformers(client, cachetest.Whole)
	var live atomic.Int32
	m := &Manager{Name: "test", Client: client, SharedInformers: shared, Controllers: []Descriptor{
		{Name: "first", Enabled: true, Init: handlerControllerInit(&live)},
		{Name: "second", Enabled: true, Init: failing},
	}}
	err := m.Run(ctx)
	if err == nil || !strings.Contains(err.Error(), "starting second") {
		t.Fatalf("Run = %v, want the error of the controller that could not start, naming it", err)
	}
	if n := live.Load(); n != 0 {
		t.Errorf("%d handlers left on the shared pod informer after a failed start, want 0", n)
	}
}

// The term's own informers start once every controller is built and stop
// with the term; a disabled controller is not built.
func TestATermRunsTheEnabledControllersOnInformersOfItsOwn(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	client := kubefake.NewClientset(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-0"}})
	synced := make(chan []*corev1.Pod, 1)
	m := &Manager{Name: "test", Client: client, Controllers: []Descriptor{
		{Name: "disabled", Enabled: false, Init: failing},
		{Name: "reader", Enabled: true, Init: func(_ context.Context, cc *Context) (Controller, error) {
			pods := cc.Informers.Core().V1().Pods()
			pods.Informer()
			return RunFunc(func(ctx context.Context) error {
				if !cache.WaitForCacheSync(ctx.Done(), pods.Informer().HasSynced) {
					return errors.New("informers did not sync")
				}
				list, _ := pods.Lister().List(labels.Everything())
				synced <- list
				<-ctx.Done()
				return nil
			}), nil
		}},
	}}
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	select {
	case pods := <-synced:
		if len(pods) != 1 {
			t.Errorf("the term's informer holds %d pods, want 1", len(pods))
		}
	case err := <-done:
		t.Fatalf("Run ended before the controller synced: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v after the context ended, want nil", err)
	}
}

// A controller that fails ends its term: the others are stopped, and
// without leader election Run returns the error.
func TestAFailingControllerEndsTheTerm(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	client := kubefake.NewClientset()
	stopped := make(chan struct{})
	m := &Manager{Name: "test", Client: client, Controllers: []Descriptor{
		{Name: "waiter", Enabled: true, Init: func(context.Context, *Context) (Controller, error) {
			return RunFunc(func(ctx context.Context) error { <-ctx.Done(); close(stopped); return nil }), nil
		}},
		{Name: "broken", Enabled: true, Init: func(context.Context, *Context) (Controller, error) {
			return RunFunc(func(context.Context) error { return errors.New("lost its watch") }), nil
		}},
	}}
	err := m.Run(ctx)
	if err == nil || !strings.Contains(err.Error(), "broken: lost its watch") {
		t.Errorf("Run = %v, want the failing controller's error, naming it", err)
	}
	select {
	case <-stopped:
	default:
		t.Error("the other controller of the term was not stopped")
	}
}

// Two components with Leases of their own lead at once in one namespace:
// evictionrequest-apiserver's controllers and evictionrequest-controller's
// must never take turns on one Lease. Two replicas of one component do.
func TestEachLeaseHasALeaderOfItsOwn(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	client := kubefake.NewClientset()
	var mu sync.Mutex
	leading := map[string]int{}
	most := map[string]int{}
	started := make(chan string, 4)
	manager := func(lease string) *Manager {
		le := leaderElection(lease)
		return &Manager{Name: lease, LeaderElection: le, Client: client, Controllers: []Descriptor{{Name: "c", Enabled: true,
			Init: func(context.Context, *Context) (Controller, error) {
				return RunFunc(func(ctx context.Context) error {
					mu.Lock()
					leading[lease]++
					most[lease] = max(most[lease], leading[lease])
					mu.Unlock()
					started <- lease
					<-ctx.Done()
					mu.Lock()
					leading[lease]--
					mu.Unlock()
					return nil
				}), nil
			}}}}
	}
	var wg sync.WaitGroup
	for _, lease := range []string{"evictionrequest-apiserver", "evictionrequest-controller", "evictionrequest-controller"} {
		wg.Go(func() { _ = manager(lease).Run(ctx) })
	}
	seen := map[string]bool{}
	for len(seen) < 2 {
		select {
		case lease := <-started:
			seen[lease] = true
		case <-time.After(wait):
			t.Fatalf("after %s only %v lead", wait, seen)
		}
	}
	cancel()
	wg.Wait()
	for lease, n := range most {
		if n != 1 {
			t.Errorf("%d replicas led on Lease %s at once, want 1", n, lease)
		}
	}
}

// wait bounds how long a test waits for a leader: the fake client's Lease
// is free, so the first campaign takes it at once.
const wait = 30 * time.Second

func leaderElection(lease string) componentbaseconfig.LeaderElectionConfiguration {
	return componentbaseconfig.LeaderElectionConfiguration{
		LeaderElect: true, ResourceLock: "leases", ResourceName: lease, ResourceNamespace: "evictionrequest-system",
		LeaseDuration: metav1.Duration{Duration: time.Minute}, RenewDeadline: metav1.Duration{Duration: 30 * time.Second},
		RetryPeriod: metav1.Duration{Duration: 50 * time.Millisecond},
	}
}
