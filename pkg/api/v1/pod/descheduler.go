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

package pod

// The descheduler's convention for background evictions (its
// EvictionsInBackground feature), which KubeVirt answers too: the
// descheduler evicts a pod annotated RequestEvictOnlyAnnotation once and
// takes a 429 whose message says "Eviction triggered evacuation" as an
// eviction under way; whoever carries it out marks the pod
// EvictionInProgressAnnotation meanwhile.
const (
	RequestEvictOnlyAnnotation   = "descheduler.alpha.kubernetes.io/request-evict-only"
	EvictionInProgressAnnotation = "descheduler.alpha.kubernetes.io/eviction-in-progress"
)

// DeschedulerAnnotations are the pod annotations of the descheduler's
// convention, for a reader of a trimmed pod cache to declare it reads them.
var DeschedulerAnnotations = []string{RequestEvictOnlyAnnotation, EvictionInProgressAnnotation}
