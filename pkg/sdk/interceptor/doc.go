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

// Package interceptor is the Go SDK of an interceptor of KEP-4563: an
// application, operator or controller that takes part in the eviction of its
// pods (migrates data, surges a replacement, checkpoints) before they go.
//
// An interceptor is one function, a Handler. The package watches only the
// EvictionRequests whose status.activeInterceptorName is the interceptor's
// name (a field selector), and when the interceptor becomes active on a
// request it:
//
//   - starts the Handler with a context of its own, and keeps the request by
//     heartbeating on its own while the Handler works, at a period well
//     inside spec.heartbeatDeadlineSeconds;
//   - lets the Handler report a message and an estimated finish time
//     (status.expectedInterceptorFinishTime) and set the cancellation
//     policy to Forbid or Allow (Request.Report);
//   - ends as the Handler's Result says: Complete and Decline set
//     status.activeInterceptorCompleted=true so that the request passes to
//     the next interceptor at once; PodTerminated keeps heartbeating until
//     the pod is gone and the controller completes the request;
//   - cancels the Handler's context the moment the interceptor loses the
//     request: a hand-off, completion, cancellation or deletion;
//   - after a restart, resumes every request it holds by running the
//     Handler again: Handlers must be idempotent, keeping their state on
//     the objects they change rather than in memory.
//
// A Handler that returns an error is run again with backoff while the
// request is still its own; it does not heartbeat meanwhile, so an
// interceptor that keeps failing is passed over at the heartbeat deadline,
// as the KEP wants of an interceptor that makes no progress.
//
// The same Handler runs as a responder of Kubernetes' lifecycle.k8s.io
// (Config.API, or discovery): the SDK watches the Evictions the controller
// labelled with the responder's name, holds those whose
// status.targetResponders entry of its name is Active, writes its own
// status.responders entry (heartbeatTime, message, expectedCompletionTime)
// by server-side apply under its name as field manager, heartbeats no
// more often than every 20 seconds, and sets completionTime on Complete,
// Decline and PodTerminated. The cancellation policy does not exist there.
//
// Several replicas of one interceptor are safe with Config.LeaderElection:
// only the replica that holds the Lease acts, and a new leader resumes the
// requests of the old one. Without it, run a single replica.
//
// The interceptor's identity needs get, list, watch and update of
// evictionrequests/status (and get of evictionrequests), delete of the pods
// it intercepts (the server requires it of every writer of a request, its
// status included), create of events, and, with leader election, get,
// create and update of its Lease: the ClusterRole evictionrequest-interceptor,
// bound in the namespaces it serves. It writes only what KEP-4563 gives an
// interceptor; the server refuses anyone but the eviction request
// controller the selection, the hand-off and the completion.
package interceptor
