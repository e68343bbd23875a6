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

// Package evictionapi names the two EvictionRequest APIs the project's
// actors speak, and finds which one a cluster serves: the
// coordination.k8s.io/v1alpha1 revision this project serves through its
// aggregated API server, and lifecycle.k8s.io/v1alpha1, which Kubernetes
// 1.37 serves itself behind the EvictionRequestAPI feature gate.
package evictionapi

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/discovery"

	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
)

// API is one of the two EvictionRequest APIs.
type API string

const (
	// Coordination is coordination.k8s.io/v1alpha1: one EvictionRequest per
	// pod, interceptors, served by evictionrequest-apiserver.
	Coordination API = "coordination.k8s.io/v1alpha1"
	// Lifecycle is lifecycle.k8s.io/v1alpha1: an EvictionRequest per
	// requester and an Eviction per pod, responders, served by
	// kube-apiserver 1.37 and later.
	Lifecycle API = "lifecycle.k8s.io/v1alpha1"
	// Auto asks Discover to choose.
	Auto API = ""
)

// Parse reads an API from a flag: "coordination", "lifecycle", their
// group/version, or "auto" (or empty) to discover it.
func Parse(s string) (API, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "auto":
		return Auto, nil
	case "coordination", string(Coordination):
		return Coordination, nil
	case "lifecycle", string(Lifecycle):
		return Lifecycle, nil
	}
	return "", fmt.Errorf("unknown EvictionRequest API %q: want coordination, lifecycle or auto", s)
}

// Discover returns want when it is not Auto, else the API the cluster
// serves evictionrequests in: coordination.k8s.io/v1alpha1 when
// evictionrequest-apiserver is installed (someone chose it), else
// lifecycle.k8s.io/v1alpha1.
func Discover(d discovery.DiscoveryInterface, want API) (API, error) {
	if want != Auto {
		return want, nil
	}
	for _, api := range []API{Coordination, Lifecycle} {
		served, err := servesEvictionRequests(d, api)
		if err != nil {
			return "", err
		}
		if served {
			return api, nil
		}
	}
	return "", fmt.Errorf("the cluster serves no EvictionRequest API: neither %s (install evictionrequest-apiserver) nor %s (Kubernetes 1.37 with --feature-gates=EvictionRequestAPI=true --runtime-config=lifecycle.k8s.io/v1alpha1=true)", Coordination, Lifecycle)
}

func servesEvictionRequests(d discovery.DiscoveryInterface, api API) (bool, error) {
	resources, err := d.ServerResourcesForGroupVersion(string(api))
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("discovering %s: %w", api, err)
	}
	for _, r := range resources.APIResources {
		if r.Name == "evictionrequests" {
			return true, nil
		}
	}
	return false, nil
}

// Group is the API group of api.
func (a API) Group() string {
	group, _, _ := strings.Cut(string(a), "/")
	return group
}

// RequestReference refers to the EvictionRequest name in namespace on
// api, for events about it.
func (a API) RequestReference(namespace, name string) *corev1.ObjectReference {
	return &corev1.ObjectReference{APIVersion: string(a), Kind: "EvictionRequest", Namespace: namespace, Name: name}
}

// Resources are the resources of api a participant reads to follow an
// eviction: its EvictionRequests, and on lifecycle.k8s.io the pods'
// Evictions.
func (a API) Resources() []string {
	if a == Lifecycle {
		return []string{"evictionrequests", "evictions"}
	}
	return []string{"evictionrequests"}
}

// ParticipantAnnotations are the pod annotations DeclaresParticipants,
// Participants, Declares and LongestSilence read (coordination.k8s.io's
// interceptors; lifecycle.k8s.io's responders are in the pod's spec), for a
// reader of a trimmed pod cache that calls them to declare.
var ParticipantAnnotations = []string{v1alpha1.PodInterceptorsAnnotation}

// DeclaresParticipants is true when pod names participants of its
// eviction on api: interceptors in the evictionrequest.coordination.k8s.io/interceptors
// annotation on coordination.k8s.io, responders in spec.evictionResponders
// on lifecycle.k8s.io.
func (a API) DeclaresParticipants(pod *corev1.Pod) bool {
	return a.Participants(pod) > 0
}

// Participants is how many participants pod names on api.
func (a API) Participants(pod *corev1.Pod) int {
	if a == Lifecycle {
		return len(pod.Spec.EvictionResponders)
	}
	return len(v1alpha1.PodInterceptorNames(pod.Annotations))
}

// Declares says whether pod declares the participant name on a: in its
// interceptor annotation on coordination.k8s.io, in its
// spec.evictionResponders on lifecycle.k8s.io. Given a pod template, it says
// whether the workload's owner asked for name.
func (a API) Declares(pod *corev1.Pod, name string) bool {
	if a == Lifecycle {
		return slices.ContainsFunc(pod.Spec.EvictionResponders, func(r corev1.EvictionResponder) bool { return r.Name == name })
	}
	return slices.Contains(v1alpha1.PodInterceptorNames(pod.Annotations), name)
}

// LongestSilence is how long the participants of pod may hold its
// eviction on api if none of them answers: each keeps its turn until it
// misses its heartbeat deadline (a request's default on coordination.k8s.io,
// 20 minutes on lifecycle.k8s.io), one after another. A participant that
// heartbeats may hold it longer still; a drain's deadline ends the wait.
func (a API) LongestSilence(pod *corev1.Pod) time.Duration {
	deadline := time.Duration(v1alpha1.DefaultHeartbeatDeadlineSeconds) * time.Second
	if a == Lifecycle {
		deadline = lifecycleutil.HeartbeatDeadline
	}
	return time.Duration(a.Participants(pod)) * deadline
}

// WriterMustDeletePod is true when api lets only those who may delete a pod
// write its EvictionRequests: evictionrequest-apiserver requires it of
// every writer of a request on coordination.k8s.io (not of its status,
// which is the interceptors').
func (a API) WriterMustDeletePod() bool {
	return a == Coordination
}

// DefaultCallTimeout bounds each call the project's clients make to
// kube-apiserver unless they are told otherwise (--kube-api-call-timeout,
// Options.CallTimeout): the SDK's requesters and interceptors, the
// controllers and the commands alike.
const DefaultCallTimeout = 30 * time.Second
