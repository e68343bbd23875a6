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

package requester

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	lifecycleapply "k8s.io/client-go/applyconfigurations/lifecycle/v1alpha1"
	metav1apply "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
)

// maxFieldManager is the longest field manager kube-apiserver accepts.
const maxFieldManager = 128

// Lifecycle asks for, withdraws and waits for the eviction of pods under
// one requester name through Kubernetes 1.37's lifecycle.k8s.io/v1alpha1
// API, where each requester has an EvictionRequest of its own per pod.
type Lifecycle struct {
	name   string
	client kubernetes.Interface
	opts   Options
}

// NewLifecycle returns a requester named name, a domain-prefixed key
// outside k8s.io and kubernetes.io (acme.io/descheduler), that writes
// lifecycle.k8s.io EvictionRequests and reads pods through client.
func NewLifecycle(name string, client kubernetes.Interface, opts Options) (*Lifecycle, error) {
	if err := evictionapi.Lifecycle.ValidateName(name); err != nil {
		return nil, fmt.Errorf("requester name: %w", err)
	}
	if opts.FieldManager == "" {
		opts.FieldManager = name
		if len(opts.FieldManager) > maxFieldManager {
			opts.FieldManager = opts.FieldManager[:maxFieldManager]
		}
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = evictionapi.DefaultCallTimeout
	}
	return &Lifecycle{name: name, client: client, opts: opts}, nil
}

// Name is the requester's name, its EvictionRequests' spec.requester.
func (l *Lifecycle) Name() string {
	return l.name
}

// FieldManager is the field manager of its writes.
func (l *Lifecycle) FieldManager() string {
	return l.opts.FieldManager
}

// CallTimeout bounds each of its API calls.
func (l *Lifecycle) CallTimeout() time.Duration {
	return l.opts.CallTimeout
}

// RequestName is the name of the requester's EvictionRequest for the pod
// with uid: the UID and a digest of the requester's name, so that every
// requester of a pod has its own, found again after a restart.
func (l *Lifecycle) RequestName(uid types.UID) string {
	digest := sha256.Sum256([]byte(l.name))
	return string(uid) + "-" + hex.EncodeToString(digest[:4])
}

// Request asks for the eviction of pod and returns the requester's
// EvictionRequest: created, or set back to the Eviction intent, by
// server-side apply. The pod owns it unless Options.KeepAfterPod, so that
// the garbage collector deletes it, and then its Eviction, with the pod.
func (l *Lifecycle) Request(ctx context.Context, pod *corev1.Pod) (*lifecyclev1alpha1.EvictionRequest, error) {
	return l.RequestWithAnnotations(ctx, pod, nil)
}

// RequestWithAnnotations is Request that sets annotations of the request in
// the same write: a request it creates carries them from the start. They
// are the requester's own: a later call without one of them removes it,
// and Withdraw keeps them.
func (l *Lifecycle) RequestWithAnnotations(ctx context.Context, pod *corev1.Pod, annotations map[string]string) (*lifecyclev1alpha1.EvictionRequest, error) {
	if pod.UID == "" || pod.Name == "" || pod.Namespace == "" {
		return nil, fmt.Errorf("pod %s/%s has no UID: pass the pod as read from the API", pod.Namespace, pod.Name)
	}
	return l.apply(ctx, pod.Namespace, pod.Name, pod.UID, lifecyclev1alpha1.EvictionRequestIntentEviction, annotations)
}

// Withdraw sets the intent of the requester's EvictionRequest for the pod
// with uid to Withdrawn and returns it; nil when there is none. When every
// requester of the pod withdrew, the controller cancels its Eviction. The
// annotations the requester applied stay.
func (l *Lifecycle) Withdraw(ctx context.Context, namespace string, uid types.UID) (*lifecyclev1alpha1.EvictionRequest, error) {
	er, err := l.Get(ctx, namespace, uid)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil || er.Spec.Intent == lifecyclev1alpha1.EvictionRequestIntentWithdrawn || er.Spec.Target.Pod == nil {
		return er, err
	}
	// An apply that leaves out an annotation the requester applied before
	// removes it: the annotations it owns go with the withdrawal. Should
	// the server's record of them not read, the withdrawal goes without.
	var annotations map[string]string
	if own, err := lifecycleapply.ExtractEvictionRequest(er, l.opts.FieldManager); err == nil {
		annotations = own.Annotations
	}
	return l.apply(ctx, namespace, er.Spec.Target.Pod.Name, uid, lifecyclev1alpha1.EvictionRequestIntentWithdrawn, annotations)
}

// Get reads the requester's EvictionRequest for the pod with uid.
func (l *Lifecycle) Get(ctx context.Context, namespace string, uid types.UID) (*lifecyclev1alpha1.EvictionRequest, error) {
	callCtx, cancel := context.WithTimeout(ctx, l.opts.CallTimeout)
	defer cancel()
	er, err := l.client.LifecycleV1alpha1().EvictionRequests(namespace).Get(callCtx, l.RequestName(uid), metav1.GetOptions{})
	if err != nil {
		// client-go returns an empty object beside its error.
		return nil, err
	}
	return er, nil
}

// apply writes the requester's request: the target, the intent, the pod as
// an owner and annotations. The request is the requester's alone: it
// forces.
func (l *Lifecycle) apply(ctx context.Context, namespace, podName string, uid types.UID, intent lifecyclev1alpha1.EvictionRequestIntent,
	annotations map[string]string) (*lifecyclev1alpha1.EvictionRequest, error) {
	config := lifecycleapply.EvictionRequest(l.RequestName(uid), namespace).WithSpec(lifecycleapply.EvictionRequestSpec().
		WithTarget(lifecycleapply.EvictionRequestTarget().WithPod(lifecycleapply.EvictionRequestPodReference().WithName(podName).WithUID(uid))).
		WithRequester(l.name).WithIntent(intent))
	if len(annotations) > 0 {
		config = config.WithAnnotations(annotations)
	}
	if !l.opts.KeepAfterPod {
		config = config.WithOwnerReferences(metav1apply.OwnerReference().WithAPIVersion("v1").WithKind("Pod").WithName(podName).WithUID(uid))
	}
	callCtx, cancel := context.WithTimeout(ctx, l.opts.CallTimeout)
	defer cancel()
	return l.client.LifecycleV1alpha1().EvictionRequests(namespace).Apply(callCtx, config, metav1.ApplyOptions{FieldManager: l.opts.FieldManager, Force: true, DryRun: l.opts.dryRun()})
}
