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

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
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
	// mayDelete is true when the caller of an eviction that asks to skip
	// the pod's participants may delete the pod, accessErr why that
	// could not be reviewed.
	mayDelete bool
	accessErr error
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
	if o.needsAccessReview(b.policy()) {
		o.mayDelete, o.accessErr = b.mayDelete(ctx, e)
	}
	return o, nil
}

// needsAccessReview is true when the answer to o rests on whether its
// caller may delete the pod: an eviction kube-apiserver sent that asks to
// skip the participants the bridge would otherwise wait for.
func (o observation) needsAccessReview(p policy) bool {
	return o.eviction.AsksToSkip && o.eviction.Authenticated && !decideTurn(o, p).Allowed
}

// mayDelete asks kube-apiserver whether the caller of e may delete its
// pod: a caller that may is granted the skip of the pod's participants it
// asks for, since it could end the pod without any eviction.
func (b *Bridge) mayDelete(ctx context.Context, e Eviction) (bool, error) {
	callCtx, cancel := context.WithTimeout(ctx, b.cfg.CallTimeout)
	defer cancel()
	review, err := b.cfg.Kube.AuthorizationV1().SubjectAccessReviews().Create(callCtx, &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{
			User: e.User, Groups: e.Groups, UID: e.UID, Extra: extraOf(e.Extra),
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: e.Namespace, Verb: "delete", Resource: "pods", Name: e.Pod},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return false, err
	}
	// Not allowed is a refusal, with or without an evaluation error (a
	// binding to a missing role), as kube-apiserver's own authorization
	// takes it.
	return review.Status.Allowed, nil
}

// extraOf is extra as a SubjectAccessReview takes it.
func extraOf(extra map[string]authenticationv1.ExtraValue) map[string]authorizationv1.ExtraValue {
	if extra == nil {
		return nil
	}
	out := make(map[string]authorizationv1.ExtraValue, len(extra))
	for k, v := range extra {
		out[k] = authorizationv1.ExtraValue(v)
	}
	return out
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
