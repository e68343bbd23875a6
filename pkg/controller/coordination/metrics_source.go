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

package coordination

import (
	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	coordinationutil "github.com/evictionrequest/apiserver/pkg/api/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/validation"
	"github.com/evictionrequest/apiserver/pkg/controller/coordination/metrics"
)

// MetricsSnapshot counts, from the informer caches, the in-progress requests
// by active interceptor and by requester, and the pods by declared
// interceptor.
func (c *Controller) MetricsSnapshot() metrics.Snapshot {
	snapshot := metrics.Snapshot{
		ActiveInterceptors: map[string]int{},
		ActiveRequesters:   map[string]int{},
		PodInterceptors:    map[string]int{},
	}
	requests, err := c.erLister.List(labels.Everything())
	if err != nil {
		utilruntime.HandleError(err)
	}
	for _, er := range requests {
		if coordinationutil.IsComplete(er) {
			continue
		}
		if created := er.CreationTimestamp.Time; snapshot.OldestInProgress.IsZero() || created.Before(snapshot.OldestInProgress) {
			snapshot.OldestInProgress = created
		}
		if er.Status.ActiveInterceptorName != nil {
			snapshot.ActiveInterceptors[*er.Status.ActiveInterceptorName]++
		}
		for _, r := range er.Spec.Requesters {
			snapshot.ActiveRequesters[r.Name]++
		}
	}
	pods, err := c.podLister.List(labels.Everything())
	if err != nil {
		utilruntime.HandleError(err)
	}
	for _, pod := range pods {
		for _, name := range v1alpha1.PodInterceptorNames(pod.Annotations) {
			// Only names the server would accept are reported by name.
			if len(validation.ValidateInterceptors([]coordination.Interceptor{{Name: name}}, field.NewPath("name"))) > 0 {
				name = metrics.InvalidLabelValue
			}
			snapshot.PodInterceptors[name]++
		}
	}
	return snapshot
}
