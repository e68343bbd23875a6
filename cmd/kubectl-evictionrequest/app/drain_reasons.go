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

// Reasons of the node lifecycle conditions corev1.NodeDrainInProgress and
// corev1.NodeDrained that kubectl evictionrequest drain
// --report-node-conditions writes, in the style of kubectl drain
// --report-node-conditions' KubectlDrainStarted...
const (
	// ReasonDrainStarted: kubectl evictionrequest drain
	// --report-node-conditions requested the evictions and waits (True,
	// False).
	ReasonDrainStarted = "KubectlEvictionRequestDrainStarted"
	// ReasonDrainQueued: kubectl evictionrequest drain
	// --max-concurrent-nodes drains the node in a later wave; it is
	// cordoned but its pods are not requested yet (both False).
	ReasonDrainQueued = "KubectlEvictionRequestDrainQueued"
	// ReasonDrainCompleted: kubectl evictionrequest drain completed
	// (False, True).
	ReasonDrainCompleted = "KubectlEvictionRequestDrainCompleted"
	// ReasonDrainFailed: kubectl evictionrequest drain gave up, most
	// often at its --timeout, with pods left (both False).
	ReasonDrainFailed = "KubectlEvictionRequestDrainFailed"
	// ReasonDrainInterrupted: kubectl evictionrequest drain was
	// interrupted (SIGINT or SIGTERM) with pods left (both False).
	ReasonDrainInterrupted = "KubectlEvictionRequestDrainInterrupted"
)
