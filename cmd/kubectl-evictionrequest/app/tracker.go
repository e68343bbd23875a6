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

package app

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

	"github.com/evictionrequest/apiserver/pkg/generated/informers/externalversions"
	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
)

// tracker follows the pods of the drained nodes, their EvictionRequests (and
// Evictions) and the PodDisruptionBudgets through informers, and signals
// every change: it is the drain's PodSource and its caches.
type tracker struct {
	pods map[string]corelisters.PodLister
	// pdbs is nil when the user may not list PodDisruptionBudgets: blocked
	// pods are then reported without naming the budget.
	pdbs    policylisters.PodDisruptionBudgetLister
	changed chan struct{}

	podFactories []informers.SharedInformerFactory
	// factories inform of the participant's requests (coordination.k8s.io
	// requests, or lifecycle.k8s.io requests and Evictions), and of
	// budgets.
	factories participant.Informers
	synced    []cache.InformerSynced
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
	t.factories = participant.Informers{Kube: informers.NewSharedInformerFactory(o.kube, 0), EvictionRequests: externalversions.NewSharedInformerFactory(o.evr, 0)}
	requestInformers, err := o.participant.Inform(t.factories)
	if err != nil {
		return nil, err
	}
	for _, informer := range requestInformers {
		if _, err := informer.AddEventHandler(handler); err != nil {
			return nil, err
		}
		t.synced = append(t.synced, informer.HasSynced)
	}
	if withPDBs {
		pdbInformer := t.factories.Kube.Policy().V1().PodDisruptionBudgets()
		if _, err := pdbInformer.Informer().AddEventHandler(handler); err != nil {
			return nil, err
		}
		t.pdbs = pdbInformer.Lister()
		t.synced = append(t.synced, pdbInformer.Informer().HasSynced)
	}
	return t, nil
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
	t.factories.EvictionRequests.Start(ctx.Done())
	t.factories.Kube.Start(ctx.Done())
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
	t.factories.EvictionRequests.Shutdown()
	t.factories.Kube.Shutdown()
}

// OnNode lists the pods of a node from the cache.
func (t *tracker) OnNode(node string) []*corev1.Pod {
	pods, _ := t.pods[node].List(labels.Everything())
	return pods
}
