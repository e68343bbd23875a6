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

// Package bridge is the eviction API bridge: admission on pods/eviction
// that sends the evictions of pods which declare interceptors (or, on
// lifecycle.k8s.io, responders) through the EvictionRequest process, as
// KEP-4563's "Changes to the Eviction API" describes. An eviction of such a
// pod is refused with 429 until the pod's request reaches its eviction
// step; the bridge asks for that request itself, as a requester of its own,
// so that kubectl drain, autoscalers and deschedulers take part without a
// change. The answer carries "Eviction triggered evacuation", which the
// descheduler's background evictions understand, as they do KubeVirt's.
//
// One eviction is answered in one pass (Decide): the bridge reads what the
// answer rests on (observe.go), decides without reading or writing
// (decide.go), writes the request with its annotations in one write and
// marks the pod for the descheduler (write.go), and answers. Once it knows
// the pod is protected, a failure of its own keeps the pod with a 429 that
// names it (refusal.go); only what it cannot know (whether the namespace
// opted in, or the pod) is left to the webhook's failurePolicy.
package bridge

import (
	"errors"
	"slices"
	"sync"
	"time"

	admissioninformers "k8s.io/client-go/informers/admissionregistration/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	admissionlisters "k8s.io/client-go/listers/admissionregistration/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	podutil "github.com/evictionrequest/apiserver/pkg/api/v1/pod"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
)

// PodAnnotationsRead are the pod annotations the bridge reads of the pods
// of its cache: the descheduler's marks, and whether a pod declares
// participants (evictionapi.ParticipantAnnotations). The pod cache of each
// binary that serves the bridge keeps them.
var PodAnnotationsRead = slices.Concat(podutil.DeschedulerAnnotations, evictionapi.ParticipantAnnotations)

// ManagersRead are the field managers whose managedFields entries the
// bridge reads of its requests: its own, on either API, for when the
// server recorded its last write of one (the janitor). The request cache of
// each binary that serves the bridge keeps them.
var ManagersRead = []string{CoordinationRequester, LifecycleRequester}

const (
	// CoordinationRequester is the bridge's requester name on
	// coordination.k8s.io, LifecycleRequester on lifecycle.k8s.io.
	CoordinationRequester = "eviction-bridge.evictionrequest.coordination.k8s.io"
	LifecycleRequester    = "evictionrequest.github.io/eviction-bridge"

	// Evacuation is in the message of every eviction the bridge refuses
	// while the pod's request is under way: the descheduler's background
	// evictions (EvictionsInBackground) take a 429 that says it as an
	// eviction under way, as KubeVirt answers. A refusal for a failure of
	// the bridge (OutcomeFailed) does not say it: nothing is under way.
	Evacuation = "Eviction triggered evacuation"

	// Name names the bridge among a process's controllers, as
	// evictionrequest-controller's --controllers takes it.
	Name = "eviction-bridge"

	// WebhookName is the name of the webhook the eviction-bridge components
	// register, by which kube-apiserver's admission webhook metrics label
	// its calls.
	WebhookName = "eviction-bridge.evictionrequest.coordination.k8s.io"

	// NamespaceLabel opts a namespace in with the value NamespaceOptIn: the
	// webhook of the eviction-bridge component selects such namespaces.
	NamespaceLabel = "evictionrequest.coordination.k8s.io/eviction-bridge"
	NamespaceOptIn = "enabled"

	// LastCallAnnotation, on the bridge's request, is when an eviction of
	// the pod last reached the bridge (RFC 3339); once it is older than the
	// inactivity time-out the bridge withdraws (Janitor).
	LastCallAnnotation = "evictionrequest.coordination.k8s.io/eviction-api-last-call"
	// CallersAnnotation, on the bridge's request, names who asked for the
	// eviction through the Eviction API (at most maxCallers, comma-separated).
	CallersAnnotation = "evictionrequest.coordination.k8s.io/eviction-api-callers"

	// RequestEvictOnlyAnnotation marks a pod the descheduler evicts in the
	// background; EvictionInProgressAnnotation is set on it while its
	// request is under way, removed when it ends without eviction.
	RequestEvictOnlyAnnotation   = podutil.RequestEvictOnlyAnnotation
	EvictionInProgressAnnotation = podutil.EvictionInProgressAnnotation

	// EventRequestedThroughEvictionAPI is the reason of the event on the
	// request that names the caller whose eviction the bridge turned into it.
	EventRequestedThroughEvictionAPI = "RequestedThroughEvictionAPI"

	// DefaultInactivity is how long the bridge keeps its request without an
	// eviction of the pod reaching it. kubectl drain asks every 5 s,
	// cluster-autoscaler and Karpenter retry within seconds with backoff
	// capped at tens of seconds; five minutes outlasts a client that
	// restarts, and ends what a client that gave up (kubectl drain
	// interrupted with Ctrl-C) left behind.
	DefaultInactivity = 5 * time.Minute
	// DefaultRetryAfter is the Retry-After of a refusal: how soon a client
	// that honours it asks again (kubectl drain asks every 5 s regardless).
	DefaultRetryAfter = 5 * time.Second

	// maxCallers bounds CallersAnnotation.
	maxCallers = 5
)

// RequesterName is the bridge's requester name on api.
func RequesterName(api evictionapi.API) string {
	if api == evictionapi.Lifecycle {
		return LifecycleRequester
	}
	return CoordinationRequester
}

// Config is what a Bridge works with.
type Config struct {
	// Participant is the bridge's requester on the API it serves; New
	// makes it read from informers of Informers, which must keep the
	// requests' annotations and which the caller starts.
	Participant participant.Participant
	Informers   participant.Informers
	// Pods is a cache of the cluster's pods; Kube reads a pod (or a
	// namespace) the cache misses and annotates pods for the descheduler.
	Pods corelisters.PodLister
	Kube kubernetes.Interface
	// Namespaces is a cache of the cluster's namespaces, whose labels say
	// whether they opted in.
	Namespaces coreinformers.NamespaceInformer
	// WebhookConfiguration names the ValidatingWebhookConfiguration of the
	// bridge, whose namespaceSelector the bridge applies itself, read from
	// Webhooks; empty applies DefaultNamespaceSelector.
	WebhookConfiguration string
	Webhooks             admissioninformers.ValidatingWebhookConfigurationInformer
	// Callers authenticates the callers of the webhook; nil serves any
	// caller, whose claims the bridge then records as unauthenticated.
	Callers *CallerAuthenticator
	// Recorder records events on the requests.
	Recorder record.EventRecorder
	// Clock is the bridge's notion of now; the real clock when nil.
	Clock clock.WithTicker
	// Inactivity is DefaultInactivity when zero; RetryAfter DefaultRetryAfter.
	Inactivity, RetryAfter time.Duration
	// CallTimeout bounds each call to kube-apiserver.
	CallTimeout time.Duration
	// Exempt are user names whose evictions pass untouched (Exempt adds
	// more): the controllers' own, which evict at the eviction step.
	Exempt []string
}

// Bridge decides evictions.
type Bridge struct {
	cfg Config
	// informers are those Participant reads from, and the namespaces' and
	// the webhook configuration's.
	informers []cache.SharedIndexInformer
	// namespaces and webhooks are read by optedIn.
	namespaces corelisters.NamespaceLister
	webhooks   admissionlisters.ValidatingWebhookConfigurationLister

	mu     sync.RWMutex
	exempt map[string]bool

	// recording holds the UIDs of the pods whose caller's call is being
	// written down (recordCall).
	recording sync.Map
}

// New returns a Bridge of cfg.
func New(cfg Config) (*Bridge, error) {
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Inactivity <= 0 {
		cfg.Inactivity = DefaultInactivity
	}
	if cfg.RetryAfter <= 0 {
		cfg.RetryAfter = DefaultRetryAfter
	}
	if cfg.Namespaces == nil || (cfg.WebhookConfiguration != "" && cfg.Webhooks == nil) {
		return nil, errors.New("the eviction API bridge needs a cache of namespaces and, with a webhook configuration, of it")
	}
	informers, err := cfg.Participant.Inform(cfg.Informers)
	if err != nil {
		return nil, err
	}
	b := &Bridge{cfg: cfg, exempt: map[string]bool{}, namespaces: cfg.Namespaces.Lister()}
	b.informers = append(informers, cfg.Namespaces.Informer())
	if cfg.WebhookConfiguration != "" {
		b.webhooks = cfg.Webhooks.Lister()
		b.informers = append(b.informers, cfg.Webhooks.Informer())
	}
	for _, user := range cfg.Exempt {
		b.Exempt(user)
	}
	return b, nil
}

// HasSynced is true once the caches the bridge answers from have synced:
// the bridge is ready.
func (b *Bridge) HasSynced() bool {
	for _, informer := range b.informers {
		if !informer.HasSynced() {
			return false
		}
	}
	return true
}
