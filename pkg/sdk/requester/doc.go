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

// Package requester is the Go SDK of an eviction requester of KEP-4563: a
// node maintenance tool, a descheduler or an autoscaler that asks for pods
// to leave their nodes through EvictionRequests.
//
// A Requester has a name (a DNS subdomain, listed in spec.requesters) and
// three calls, each idempotent and safe to repeat after a crash:
//
//   - Request asks for the eviction of a pod. It creates the
//     EvictionRequest named after the pod's UID, or adds the requester to the
//     one that exists, by server-side apply with the requester's own field
//     manager, so that concurrent requesters never drop each other's entry.
//     The request is owned by the pod, so the garbage collector deletes it
//     with the pod.
//   - Withdraw removes the requester's own entry, and nobody else's. When
//     no requester is left the eviction request controller cancels the
//     request, unless its interceptor forbade it: then Withdraw returns a
//     *CancellationForbiddenError.
//   - Wait waits until the request completes and says why: the pod was
//     deleted, the pod terminated, or the request was canceled.
//
// The caller needs permission to delete the pod (asking for an eviction is
// asking for a deletion), and to get, patch and watch evictionrequests.
package requester
