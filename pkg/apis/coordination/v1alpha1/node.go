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

package v1alpha1

// The node drain requester of evictionrequest-apiserver (off unless the
// server runs with --enable-node-drain-controller) reads and writes these on
// Nodes.
const (
	// NodeDrainAnnotation on a Node, set to "true", asks for the node to be
	// drained through EvictionRequests: the node is cordoned and every pod
	// of it that a drain evicts gets an EvictionRequest, including pods that
	// land on it later. Removing the annotation (or any other value)
	// withdraws the requests that are not complete and uncordons the node
	// if the drain cordoned it.
	NodeDrainAnnotation = "evictionrequest.coordination.k8s.io/drain"
	// NodeCordonedByAnnotation records who cordoned a Node on behalf of a
	// drain, so that only that drain uncordons it: a node an admin cordoned
	// stays cordoned when the drain ends.
	NodeCordonedByAnnotation = "evictionrequest.coordination.k8s.io/cordoned-by"
	// NodeDrainForceAnnotation on a Node, set to "true", lets its drain
	// evict pods that declare no controller, as kubectl drain --force
	// does; without it such pods refuse the drain.
	NodeDrainForceAnnotation = "evictionrequest.coordination.k8s.io/drain-force"
	// NodeDrainDeleteEmptyDirDataAnnotation on a Node, set to "true", lets
	// its drain evict pods with emptyDir volumes, as kubectl drain
	// --delete-emptydir-data does; without it such pods refuse the drain.
	NodeDrainDeleteEmptyDirDataAnnotation = "evictionrequest.coordination.k8s.io/drain-delete-emptydir-data"

	// DrainDeadlineAnnotation on an EvictionRequest (either API) says, in
	// RFC 3339, when the drain that asked for it stops waiting for the
	// interceptors or responders and PodDisruptionBudgets, and
	// DrainOnDeadlineAnnotation what it does then: fail, evict or delete.
	// Interceptors read them to finish, or to save what they can, before
	// the deadline passes. On a Node the declarative drain reads them:
	// the deadline as a duration from the drain's start (such as 30m) or
	// an RFC 3339 time.
	DrainDeadlineAnnotation   = "evictionrequest.coordination.k8s.io/drain-deadline"
	DrainOnDeadlineAnnotation = "evictionrequest.coordination.k8s.io/drain-on-deadline"
)
