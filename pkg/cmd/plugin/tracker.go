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
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"
	policylisters "k8s.io/client-go/listers/policy/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/evictionrequest/apiserver/pkg/drain"
	"github.com/evictionrequest/apiserver/pkg/generated/informers/externalversions"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/util/lifecycleindex"
)

// tracker follows the pods of the drained nodes, their EvictionRequests (and
// Evictions) and the PodDisruptionBudgets through informers, and signals
// every change: it is the drain's PodSource and its caches.
type tracker struct {
	pods map[string]corelisters.PodLister
	// requests is the API's requests as the drain reads them.
	requests drain.Requests
	// pdbs is nil when the user may not list PodDisruptionBudgets: blocked
	// pods are then reported without naming the budget.
	pdbs    policylisters.PodDisruptionBudgetLister
	changed chan struct{}

	podFactories []informers.SharedInformerFactory
	// requestFactory informs of coordination.k8s.io requests, kubeFactory
	// of lifecycle.k8s.io requests and Evictions, and of budgets.
	requestFactory externalversions.SharedInformerFactory
	kubeFactory    informers.SharedInformerFactory
	synced         []cache.InformerSynced
}

func newTracker(o *Options, nodes []string, withPDBs bool) (*tracker, error) {
	t := &tracker{pods: map[string]corelisters.PodLister{}, changed: make(chan struct{}, 1)}
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { t.signal() },
		UpdateFunc: func(any, any) { t.signal() },
		DeleteFunc: func(any) { t.signal() },
	}
	for _, node := range nodes {
		selector := fields.OneTermEqualSelector("spec.nodeName", node).String()
		factory := informers.NewSharedInformerFactoryWithOptions(o.kube, 0,
			informers.WithTweakListOptions(func(opts *metav1.ListOptions) { opts.FieldSelector = selector }))
		informer := factory.Core().V1().Pods()
		if _, err := informer.Informer().AddEventHandler(handler); err != nil {
			return nil, err
		}
		t.pods[node] = informer.Lister()
		t.podFactories = append(t.podFactories, factory)
		t.synced = append(t.synced, informer.Informer().HasSynced)
	}
	t.kubeFactory = informers.NewSharedInformerFactory(o.kube, 0)
	if err := t.informRequests(o, handler); err != nil {
		return nil, err
	}
	if withPDBs {
		pdbInformer := t.kubeFactory.Policy().V1().PodDisruptionBudgets()
		if _, err := pdbInformer.Informer().AddEventHandler(handler); err != nil {
			return nil, err
		}
		t.pdbs = pdbInformer.Lister()
		t.synced = append(t.synced, pdbInformer.Informer().HasSynced)
	}
	return t, nil
}

// informRequests follows the requests of the plugin's API: on
// coordination.k8s.io its EvictionRequests, on lifecycle.k8s.io its
// EvictionRequests and the Evictions, indexed by pod.
func (t *tracker) informRequests(o *Options, handler cache.ResourceEventHandler) error {
	if o.api != evictionapi.Lifecycle {
		t.requestFactory = externalversions.NewSharedInformerFactory(o.evr, 0)
		informer := t.requestFactory.Coordination().V1alpha1().EvictionRequests()
		if _, err := informer.Informer().AddEventHandler(handler); err != nil {
			return err
		}
		t.requests = drain.NewEvictionRequests(o.requester, informer.Lister())
		t.synced = append(t.synced, informer.Informer().HasSynced)
		return nil
	}
	requests, evictions := t.kubeFactory.Lifecycle().V1alpha1().EvictionRequests(), t.kubeFactory.Lifecycle().V1alpha1().Evictions()
	if err := lifecycleindex.AddEvictions(evictions.Informer()); err != nil {
		return err
	}
	for _, informer := range []cache.SharedIndexInformer{requests.Informer(), evictions.Informer()} {
		if _, err := informer.AddEventHandler(handler); err != nil {
			return err
		}
		t.synced = append(t.synced, informer.HasSynced)
	}
	t.requests = drain.NewLifecycleRequests(o.lifecycle, requests.Lister(), evictions.Informer().GetIndexer())
	return nil
}

func (t *tracker) signal() {
	select {
	case t.changed <- struct{}{}:
	default:
	}
}

// start starts the informers until ctx ends, and waits until they have
// synced or waitCtx ends.
func (t *tracker) start(ctx, waitCtx context.Context) error {
	for _, f := range t.podFactories {
		f.Start(ctx.Done())
	}
	if t.requestFactory != nil {
		t.requestFactory.Start(ctx.Done())
	}
	t.kubeFactory.Start(ctx.Done())
	if !cache.WaitForCacheSync(waitCtx.Done(), t.synced...) {
		return fmt.Errorf("watching the drain's pods and EvictionRequests: %w", context.Cause(waitCtx))
	}
	return nil
}

// stop waits for the informers to stop; the context of start must have ended.
func (t *tracker) stop() {
	for _, f := range t.podFactories {
		f.Shutdown()
	}
	if t.requestFactory != nil {
		t.requestFactory.Shutdown()
	}
	t.kubeFactory.Shutdown()
}

// OnNode lists the pods of a node from the cache.
func (t *tracker) OnNode(node string) []*corev1.Pod {
	pods, _ := t.pods[node].List(labels.Everything())
	return pods
}
