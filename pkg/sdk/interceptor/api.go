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

package interceptor

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// object is what says whose turn it is in one of the APIs: an
// EvictionRequest of coordination.k8s.io, an Eviction of lifecycle.k8s.io.
type object interface {
	runtime.Object
	metav1.Object
}

// api is one EvictionRequest API as an interceptor speaks it. The SDK's
// watch, holds, heartbeats and backoff are the same on both; only how it
// finds its turns and writes its part of the status differ.
type api[T object] interface {
	// watch returns the informer of the objects the interceptor may hold,
	// narrowed on the server to those that name it.
	watch() watched
	// read gets the object from kube-apiserver.
	read(ctx context.Context, namespace, name string) (T, error)
	// owns is true while obj (nil when gone) is the interceptor's to work
	// on.
	owns(obj T) bool
	// lossReason says, for the log, why the interceptor no longer holds
	// obj (nil when gone).
	lossReason(obj T) string
	// pod is the target of obj.
	pod(obj T) types.NamespacedName
	// declines says why the interceptor passes obj on without running its
	// Handler; "" runs it.
	declines(obj T) string
	// period is how often the interceptor heartbeats on obj when the
	// configuration leaves it open, and the longest period it allows.
	period(obj T, configured time.Duration) time.Duration
	// write writes w as the interceptor's status on obj, with obj's
	// resourceVersion as precondition.
	write(ctx context.Context, obj T, w statusWrite) (T, error)
	// terminationEndsTurn is true when a Handler that terminated the pod
	// ends its turn at once (a responder's completion may have evicted the
	// pod), rather than holding the request until the pod is gone.
	terminationEndsTurn() bool
	// request is the Request a Handler sees of obj.
	request(obj T, r Reporter) *Request
	// scheme knows the kind of obj, for events.
	scheme() *runtime.Scheme
}

// watched is an informer with how to start and stop it.
type watched struct {
	informer cache.SharedIndexInformer
	start    func(stop <-chan struct{})
	shutdown func()
}

// statusWrite is one write of the interceptor's status: a heartbeat with
// its progress, or, with done, the end of its turn.
type statusWrite struct {
	now      time.Time
	progress Progress
	// done ends the turn; message, when set, replaces the progress's.
	done    bool
	message string
}
