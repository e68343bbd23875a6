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
	"encoding/json"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	metav1apply "k8s.io/client-go/applyconfigurations/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/utils/ptr"

	coordinationutil "github.com/evictionrequest/apiserver/pkg/api/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	coordinationapply "github.com/evictionrequest/apiserver/pkg/generated/applyconfiguration/coordination/v1alpha1"
	versioned "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned"
	coordinationclient "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned/typed/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
)

// withdrawAttempts bounds how often Withdraw retries a patch that lost a
// race with another writer of spec.requesters.
const withdrawAttempts = 5

// Options tune a Requester; the zero value is fine.
type Options struct {
	// FieldManager is the server-side apply field manager of the requester's
	// writes; the requester name by default. Each requester needs its own.
	FieldManager string
	// HeartbeatDeadlineSeconds is spec.heartbeatDeadlineSeconds of the
	// requests this requester creates; nil leaves the server's default
	// (1800). A request that exists keeps its own deadline.
	HeartbeatDeadlineSeconds *int32
	// CallTimeout bounds every API call; evictionapi.DefaultCallTimeout when zero.
	CallTimeout time.Duration
	// KeepAfterPod leaves out the ownerReference to the pod: the request
	// then outlives its pod, with its Complete condition, until the
	// requester deletes it. By default the pod owns the request and the
	// garbage collector deletes it with the pod.
	KeepAfterPod bool
	// DryRun sends every write as a server-side dry run: kube-apiserver
	// (and our server) validate and admit it, and store nothing.
	DryRun bool
}

// dryRun is the dryRun option of the writes opts asks for.
func (opts Options) dryRun() []string {
	if opts.DryRun {
		return []string{metav1.DryRunAll}
	}
	return nil
}

// Requester asks for, withdraws and waits for the eviction of pods under
// one requester name.
type Requester struct {
	name string
	// client is the whole clientset: watches ask it whether it speaks the
	// WatchList protocol.
	client   versioned.Interface
	requests coordinationclient.EvictionRequestsGetter
	pods     corev1client.PodsGetter
	opts     Options
}

// New returns a requester named name, a DNS-1123 subdomain such as
// descheduler.example.com, that writes EvictionRequests through client
// and reads pods through pods.
func New(name string, client versioned.Interface, pods corev1client.PodsGetter, opts Options) (*Requester, error) {
	if err := evictionapi.Coordination.ValidateName(name); err != nil {
		return nil, fmt.Errorf("requester name %q: %w", name, err)
	}
	if opts.FieldManager == "" {
		opts.FieldManager = name
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = evictionapi.DefaultCallTimeout
	}
	return &Requester{name: name, client: client, requests: client.CoordinationV1alpha1(), pods: pods, opts: opts}, nil
}

// CallTimeout bounds each of its API calls.
func (r *Requester) CallTimeout() time.Duration {
	return r.opts.CallTimeout
}

// Name is the name the requester lists itself under in spec.requesters.
func (r *Requester) Name() string {
	return r.name
}

// FieldManager is the field manager of its writes.
func (r *Requester) FieldManager() string {
	return r.opts.FieldManager
}

// Request asks for the eviction of pod and returns its EvictionRequest.
//
// It applies the requester's own entry to the request named after the
// pod's UID, creating the request if needed. A request whose requesters are
// locked is returned as it is: one that completed because its pod is gone,
// and one whose interceptor set the cancellation policy to Forbid (the
// eviction goes ahead, and the requester is not listed). A request that
// completed as canceled while the pod still runs is replaced by a new one.
func (r *Requester) Request(ctx context.Context, pod *corev1.Pod) (*v1alpha1.EvictionRequest, error) {
	return r.RequestWithAnnotations(ctx, pod, nil)
}

// RequestWithAnnotations is Request that sets annotations of the request in
// the same write: a request it creates carries them from the start. They
// are the requester's own, as its entry is: a later call without one of
// them removes it.
func (r *Requester) RequestWithAnnotations(ctx context.Context, pod *corev1.Pod, annotations map[string]string) (*v1alpha1.EvictionRequest, error) {
	if pod.UID == "" || pod.Name == "" || pod.Namespace == "" {
		return nil, fmt.Errorf("pod %s/%s has no UID: pass the pod as read from the API", pod.Namespace, pod.Name)
	}
	er, err := r.apply(ctx, pod, r.opts.HeartbeatDeadlineSeconds, annotations)
	if apierrors.IsConflict(err) && r.opts.HeartbeatDeadlineSeconds != nil {
		// Another requester created the request with another deadline;
		// the deadline is immutable and the request keeps it.
		er, err = r.apply(ctx, pod, nil, annotations)
	}
	if err == nil || !isRequestersLocked(err) {
		return er, err
	}
	current, getErr := r.get(ctx, pod.Namespace, string(pod.UID))
	if getErr != nil {
		return nil, errors.Join(err, getErr)
	}
	if !coordinationutil.IsCanceled(current) {
		return current, nil
	}
	// The eviction of this pod was canceled earlier: the requesters of a
	// complete request are locked, so a new request takes its place.
	callCtx, cancel := context.WithTimeout(ctx, r.opts.CallTimeout)
	defer cancel()
	err = r.requests.EvictionRequests(pod.Namespace).Delete(callCtx, current.Name, metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: ptr.To(current.UID), ResourceVersion: ptr.To(current.ResourceVersion)},
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("replacing the canceled EvictionRequest of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return r.apply(ctx, pod, r.opts.HeartbeatDeadlineSeconds, annotations)
}

// apply writes the requester's intent: the target, its own entry in
// spec.requesters, the pod as an owner and annotations. Without a
// deadline it forces: every other field it applies is the requester's own
// or has one value for every requester, so a conflict can only be over its
// annotations, last set by another writer of the requester's name (an
// older release's patch, kubectl annotate). A deadline another requester
// set is not the requester's to take: that conflict is answered.
func (r *Requester) apply(ctx context.Context, pod *corev1.Pod, deadline *int32, annotations map[string]string) (*v1alpha1.EvictionRequest, error) {
	spec := coordinationapply.EvictionRequestSpec().
		WithTarget(coordinationapply.EvictionTarget().WithPodRef(
			coordinationapply.LocalPodReference().WithName(pod.Name).WithUID(string(pod.UID)))).
		WithRequesters(coordinationapply.Requester().WithName(r.name))
	if deadline != nil {
		spec = spec.WithHeartbeatDeadlineSeconds(*deadline)
	}
	config := coordinationapply.EvictionRequest(string(pod.UID), pod.Namespace).WithSpec(spec)
	if len(annotations) > 0 {
		config = config.WithAnnotations(annotations)
	}
	if !r.opts.KeepAfterPod {
		config = config.WithOwnerReferences(metav1apply.OwnerReference().
			WithAPIVersion("v1").WithKind("Pod").WithName(pod.Name).WithUID(pod.UID))
	}
	callCtx, cancel := context.WithTimeout(ctx, r.opts.CallTimeout)
	defer cancel()
	return r.requests.EvictionRequests(pod.Namespace).Apply(callCtx, config, metav1.ApplyOptions{FieldManager: r.opts.FieldManager, Force: deadline == nil, DryRun: r.opts.dryRun()})
}

// Withdraw removes this requester from the EvictionRequest of the pod with
// the given UID and returns the request as it is now; nil when there is no
// request. Other requesters' entries stay. It does nothing to a request that
// does not list the requester or that is complete. While the active
// interceptor forbids cancellation it changes nothing and returns a
// *CancellationForbiddenError.
func (r *Requester) Withdraw(ctx context.Context, namespace string, podUID types.UID) (*v1alpha1.EvictionRequest, error) {
	var lastErr error
	for range withdrawAttempts {
		er, err := r.get(ctx, namespace, string(podUID))
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		index := coordinationutil.RequesterIndex(er, r.name)
		if index < 0 || coordinationutil.IsComplete(er) {
			return er, nil
		}
		if coordinationutil.CancellationForbidden(er) {
			return er, &CancellationForbiddenError{Namespace: namespace, Name: er.Name, Interceptor: coordinationutil.ActiveInterceptor(er)}
		}
		patched, err := r.removeEntry(ctx, er, index)
		switch {
		case err == nil:
			return patched, nil
		case apierrors.IsNotFound(err):
			return nil, nil
		case apierrors.IsInvalid(err), apierrors.IsConflict(err):
			// Another requester changed the list under us, or the
			// interceptor forbade cancellation: look again.
			lastErr = err
		default:
			return nil, err
		}
	}
	return nil, fmt.Errorf("withdrawing %s from EvictionRequest %s/%s: %w", r.name, namespace, podUID, lastErr)
}

// removeEntry removes spec.requesters[index] with a JSON patch whose test
// operation makes sure it is still this requester's entry: whoever added
// or removed one meanwhile makes it fail instead of losing their write.
func (r *Requester) removeEntry(ctx context.Context, er *v1alpha1.EvictionRequest, index int) (*v1alpha1.EvictionRequest, error) {
	path := fmt.Sprintf("/spec/requesters/%d", index)
	patch, err := json.Marshal([]map[string]any{
		{"op": "test", "path": path + "/name", "value": r.name},
		{"op": "remove", "path": path},
	})
	if err != nil {
		return nil, err
	}
	callCtx, cancel := context.WithTimeout(ctx, r.opts.CallTimeout)
	defer cancel()
	return r.requests.EvictionRequests(er.Namespace).Patch(callCtx, er.Name, types.JSONPatchType, patch, metav1.PatchOptions{FieldManager: r.opts.FieldManager, DryRun: r.opts.dryRun()})
}

// Get reads the EvictionRequest of the pod with uid.
func (r *Requester) Get(ctx context.Context, namespace string, uid types.UID) (*v1alpha1.EvictionRequest, error) {
	return r.get(ctx, namespace, string(uid))
}

func (r *Requester) get(ctx context.Context, namespace, name string) (*v1alpha1.EvictionRequest, error) {
	callCtx, cancel := context.WithTimeout(ctx, r.opts.CallTimeout)
	defer cancel()
	er, err := r.requests.EvictionRequests(namespace).Get(callCtx, name, metav1.GetOptions{})
	if err != nil {
		// client-go returns an empty object beside its error.
		return nil, err
	}
	return er, nil
}

// CancellationForbiddenError is Withdraw's answer while the request's
// status.evictionRequestCancellationPolicy is Forbid: the active
// interceptor is in a step that cannot be undone, and the eviction goes
// ahead. Withdraw again once the policy is Allow, or let it complete.
type CancellationForbiddenError struct {
	Namespace, Name string
	// Interceptor is the active interceptor that forbade it, if any.
	Interceptor string
}

func (e *CancellationForbiddenError) Error() string {
	who := "its interceptor"
	if e.Interceptor != "" {
		who = "interceptor " + e.Interceptor
	}
	return fmt.Sprintf("EvictionRequest %s/%s cannot be canceled now: %s set status.evictionRequestCancellationPolicy to Forbid", e.Namespace, e.Name, who)
}

// IsCancellationForbidden is true when err is or wraps a
// *CancellationForbiddenError.
func IsCancellationForbidden(err error) bool {
	var target *CancellationForbiddenError
	return errors.As(err, &target)
}

// isRequestersLocked is true for the admission plugin's refusal to change
// spec.requesters of a complete request or under a Forbid policy.
func isRequestersLocked(err error) bool {
	if !apierrors.IsInvalid(err) {
		return false
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return false
	}
	for _, cause := range status.Status().Details.Causes {
		if cause.Field == "spec.requesters" {
			return true
		}
	}
	return false
}
