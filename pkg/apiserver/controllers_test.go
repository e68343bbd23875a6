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

package apiserver

import (
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/informers"
	corev1informers "k8s.io/client-go/informers/core/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"

	"github.com/evictionrequest/apiserver/pkg/controller/nodedrain"
	erfake "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned/fake"
	"github.com/evictionrequest/apiserver/pkg/generated/informers/externalversions"
)

// countingInformer counts the event handlers registered on a shared
// informer and not removed.
type countingInformer struct {
	cache.SharedIndexInformer
	mu   sync.Mutex
	live int
}

func (c *countingInformer) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	registration, err := c.SharedIndexInformer.AddEventHandler(h)
	if err == nil {
		c.mu.Lock()
		c.live++
		c.mu.Unlock()
	}
	return registration, err
}

func (c *countingInformer) RemoveEventHandler(registration cache.ResourceEventHandlerRegistration) error {
	err := c.SharedIndexInformer.RemoveEventHandler(registration)
	if err == nil {
		c.mu.Lock()
		c.live--
		c.mu.Unlock()
	}
	return err
}

func (c *countingInformer) handlers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.live
}

// countingPodInformer is a pod informer whose handlers are counted.
type countingPodInformer struct {
	corev1informers.PodInformer
	informer *countingInformer
}

func (c countingPodInformer) Informer() cache.SharedIndexInformer { return c.informer }

func testControllerContext(t *testing.T, indexed bool) (controllerContext, termInformers, *countingInformer) {
	t.Helper()
	kube := kubefake.NewClientset()
	factory := informers.NewSharedInformerFactory(kube, 0)
	pods := factory.Core().V1().Pods()
	if indexed {
		if err := nodedrain.AddPodIndexer(pods); err != nil {
			t.Fatal(err)
		}
	}
	counting := &countingInformer{SharedIndexInformer: pods.Informer()}
	loopback := erfake.NewClientset()
	cc := controllerContext{
		cfg: &ControllerConfig{Workers: 1, CallTimeout: time.Second,
			NodeDrain: &NodeDrainConfig{Requester: "drain.example.com", Workers: 1}},
		kubeClient: kube, eventClient: kube, loopback: loopback,
		factory: factory, podInformer: countingPodInformer{PodInformer: pods, informer: counting}, clock: clock.RealClock{},
	}
	return cc, termInformers{evictionRequests: externalversions.NewSharedInformerFactory(loopback, 0)}, counting
}

// When a controller of a term cannot be built, the ones built before it
// leave no handler on the server-wide pod informer, which outlives the term:
// each new term would otherwise add another.
func TestAControllerThatCannotStartLeavesNoHandlerBehind(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	// Without the node index the node drain cannot be built, after the
	// eviction request controller was.
	cc, ti, pods := testControllerContext(t, false)
	if _, err := startControllers(ctx, cc, ti, controllerStarts); err == nil {
		t.Fatal("the node drain started on a pod informer without its index")
	}
	if n := pods.handlers(); n != 0 {
		t.Errorf("%d handlers left on the shared pod informer after a failed start, want 0", n)
	}
}

func TestEveryControllerStarts(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	cc, ti, pods := testControllerContext(t, true)
	controllers, err := startControllers(ctx, cc, ti, controllerStarts)
	if err != nil {
		t.Fatal(err)
	}
	if len(controllers) != 2 || pods.handlers() != 2 {
		t.Errorf("%d controllers with %d pod handlers, want the eviction request controller and the node drain", len(controllers), pods.handlers())
	}
	for _, c := range controllers {
		c.abandon()
	}
	if n := pods.handlers(); n != 0 {
		t.Errorf("%d handlers left after the controllers were abandoned", n)
	}
}
