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

import "github.com/evictionrequest/apiserver/pkg/controller/eviction"

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
	// EventEvicted, EventEvictionFailed and EventEvictionNotSupported are
	// the eviction's, shared with the controller of lifecycle.k8s.io.
	EventEvicted              = eviction.EventEvicted
	EventEvictionFailed       = eviction.EventEvictionFailed
	EventEvictionNotSupported = eviction.EventEvictionNotSupported
	// EventCompleted (the request completed because its pod is gone or
	// terminal) and EventCanceled (it was canceled) are shared too.
	EventCompleted = eviction.EventCompleted
	EventCanceled  = eviction.EventCanceled
)
