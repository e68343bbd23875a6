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

package nodedrain

// The annotations an admin or a tool sets on a Node to drain it
// declaratively; the deadline annotations (drain.DeadlineAnnotation and
// drain.OnDeadlineAnnotation) are read from the Node too.
const (
	// DrainAnnotation on a Node, set to "true", asks for the node to be
	// drained through EvictionRequests: the node is cordoned and every pod
	// of it that a drain evicts gets an EvictionRequest, including pods that
	// land on it later. Removing the annotation (or any other value)
	// withdraws the requests that are not complete and uncordons the node
	// if the drain cordoned it.
	DrainAnnotation = "evictionrequest.coordination.k8s.io/drain"
	// ForceAnnotation on a Node, set to "true", lets its drain evict pods
	// that declare no controller, as kubectl drain --force does; without it
	// such pods refuse the drain.
	ForceAnnotation = "evictionrequest.coordination.k8s.io/drain-force"
	// DeleteEmptyDirDataAnnotation on a Node, set to "true", lets its drain
	// evict pods with emptyDir volumes, as kubectl drain
	// --delete-emptydir-data does; without it such pods refuse the drain.
	DeleteEmptyDirDataAnnotation = "evictionrequest.coordination.k8s.io/drain-delete-emptydir-data"
)
