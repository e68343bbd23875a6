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

package evictionrequest

// Reasons of the events the controller records on EvictionRequests.
const (
	// EventInterceptorSelected: the highest-index interceptor became active.
	EventInterceptorSelected = "InterceptorSelected"
	// EventInterceptorHandedOff: the active interceptor completed and the
	// next one at a lower index became active.
	EventInterceptorHandedOff = "InterceptorHandedOff"
	// EventInterceptorTimedOut: the active interceptor missed its heartbeat
	// deadline and was passed over.
	EventInterceptorTimedOut = "InterceptorTimedOut"
	// EventEvicted: the Eviction API accepted the eviction of the pod.
	EventEvicted = "Evicted"
	// EventEvictionFailed: the Eviction API refused or failed; the
	// controller retries with backoff.
	EventEvictionFailed = "EvictionFailed"
	// EventEvictionNotSupported: the pod is a DaemonSet or mirror pod, which
	// the controller never evicts through the API.
	EventEvictionNotSupported = "EvictionNotSupported"
	// EventCompleted: the request completed because its pod is gone or terminal.
	EventCompleted = "Completed"
	// EventCanceled: the request completed because it was canceled.
	EventCanceled = "Canceled"
)
