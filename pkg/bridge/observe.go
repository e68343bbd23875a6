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

package bridge

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
)

// observation is what the bridge read to answer one eviction, the whole
// input of decide.
type observation struct {
	eviction Eviction
	// now is when the bridge read it, by its clock.
	now time.Time
	// optedIn is true when the namespace is the bridge's (optin.go),
	// exempt when the caller's evictions pass untouched; neither, nothing
	// more is read.
	optedIn, exempt bool
	// pod is the pod as cached (or read live on a miss); nil when it does
	// not exist.
	pod *corev1.Pod
	// status is where the bridge's request of the pod stands, statusErr
	// why it could not be read.
	status    participant.Status
	statusErr error
}

// observe reads what the answer to e rests on, from the caches, and from
// kube-apiserver what they miss. An error is a namespace or pod it could
// not read: then the bridge cannot tell whether the pod is protected.
func (b *Bridge) observe(ctx context.Context, e Eviction) (observation, error) {
	o := observation{eviction: e, now: b.cfg.Clock.Now()}
	var err error
	if o.optedIn, err = b.optedIn(ctx, e.Namespace); err != nil || !o.optedIn {
		return o, err
	}
	if o.exempt = b.exempted(e.User); o.exempt {
		return o, nil
	}
	if o.pod, err = b.pod(ctx, e.Namespace, e.Pod); err != nil || o.pod == nil {
		return o, err
	}
	o.status, o.statusErr = b.cfg.Participant.Status(ctx, o.pod.Namespace, o.pod.UID)
	return o, nil
}

// pod reads the pod from the cache, or from kube-apiserver when the cache
// misses it (created a moment ago); nil when it does not exist.
func (b *Bridge) pod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	pod, err := b.cfg.Pods.Pods(namespace).Get(name)
	if err == nil {
		return pod, nil
	}
	if !apierrors.IsNotFound(err) {
		return nil, err
	}
	callCtx, cancel := context.WithTimeout(ctx, b.cfg.CallTimeout)
	defer cancel()
	pod, err = b.cfg.Kube.CoreV1().Pods(namespace).Get(callCtx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return pod, err
}
