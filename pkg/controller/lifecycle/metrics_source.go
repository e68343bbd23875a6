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
	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/controller/lifecycle/metrics"
)

// MetricsSnapshot counts, from the informer caches, the unfinished
// Evictions by active responder, the requests that want an eviction by
// requester, and the Evictions by state.
func (c *Controller) MetricsSnapshot() metrics.Snapshot {
	s := metrics.Snapshot{ActiveResponders: map[string]int{}, ActiveRequesters: map[string]int{}, Evictions: map[string]int{}}
	evictions, err := c.evictionLister.List(labels.Everything())
	if err != nil {
		utilruntime.HandleError(err)
	}
	for _, ev := range evictions {
		switch {
		case lifecycleutil.IsEvicted(ev):
			s.Evictions["TargetEvicted"]++
		case lifecycleutil.IsFinished(ev):
			s.Evictions["Failed"]++
		default:
			s.Evictions["InProgress"]++
			if created := ev.CreationTimestamp.Time; s.OldestInProgress.IsZero() || created.Before(s.OldestInProgress) {
				s.OldestInProgress = created
			}
			if name := lifecycleutil.ActiveResponder(ev); name != "" {
				s.ActiveResponders[name]++
			}
		}
	}
	requests, err := c.requestLister.List(labels.Everything())
	if err != nil {
		utilruntime.HandleError(err)
	}
	for _, er := range requests {
		if lifecycleutil.WantsEviction(er) && !lifecycleutil.IsRequestFinished(er) {
			s.ActiveRequesters[er.Spec.Requester]++
		}
	}
	return s
}

// MetricsObjects lists, from the informer caches, the Evictions and
// EvictionRequests whose series the KEP's metrics report: every Eviction's
// target responders and refused evictions, and every request that is not
// being deleted, with its intent.
func (c *Controller) MetricsObjects() (evictions, requests []metrics.Object) {
	evs, err := c.evictionLister.List(labels.Everything())
	if err != nil {
		utilruntime.HandleError(err)
	}
	for _, ev := range evs {
		if ev.Spec.Target.Pod == nil {
			continue
		}
		o := metrics.Object{Namespace: ev.Namespace, Name: ev.Name, Target: ev.Spec.Target.Pod.Name,
			ResponderStates: map[string]string{}, FailedEvictions: int(lifecycleutil.FailedEvictions(ev))}
		for _, r := range ev.Status.TargetResponders {
			o.ResponderStates[r.Name] = string(r.State)
		}
		evictions = append(evictions, o)
	}
	ers, err := c.requestLister.List(labels.Everything())
	if err != nil {
		utilruntime.HandleError(err)
	}
	for _, er := range ers {
		if er.DeletionTimestamp != nil || er.Spec.Target.Pod == nil {
			continue
		}
		requests = append(requests, metrics.Object{Namespace: er.Namespace, Name: er.Name, Target: er.Spec.Target.Pod.Name,
			Requester: er.Spec.Requester, Intent: string(er.Spec.Intent)})
	}
	return evictions, requests
}
