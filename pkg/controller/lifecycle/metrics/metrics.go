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

// Package metrics holds the Prometheus metrics of the lifecycle.k8s.io
// eviction request controller and default evictor, served on
// evictionrequest-controller's /metrics.
package metrics

import (
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"

	"github.com/evictionrequest/apiserver/pkg/controller/eviction"
	"github.com/evictionrequest/apiserver/pkg/util/scrapegauges"

	// The workqueues report depth, adds, latency and retries through this
	// provider.
	_ "k8s.io/component-base/metrics/prometheus/workqueue"
)

const namespace = "evictionrequest"

// Results of an Eviction, the label of EvictionDuration.
const (
	// ResultEvicted is an Eviction whose target was evicted.
	ResultEvicted = "TargetEvicted"
	// ResultEvictionFailed is an Eviction that failed.
	ResultEvictionFailed = "Failed"
)

var (
	// EvictionsCreated counts the Evictions the controller created.
	EvictionsCreated = metrics.NewCounter(&metrics.CounterOpts{
		Namespace: namespace, Subsystem: "lifecycle_controller", Name: "evictions_created_total",
		Help:           "Number of Evictions the eviction request controller created for EvictionRequests.",
		StabilityLevel: metrics.ALPHA,
	})
	// ResponderTurns counts the responders' turns that ended, by the state
	// they ended in: Completed, Interrupted (a missed heartbeat deadline,
	// or a pod gone before the responder reported) or Canceled.
	ResponderTurns = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: namespace, Subsystem: "lifecycle_controller", Name: "responder_turns_total",
		Help:           "Number of responder turns that ended, by the state they ended in (Completed, Interrupted, Canceled).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"state"})
	// SteppedAside is 1 for each of this process's two controllers that
	// stepped aside for kube-controller-manager's of the same name, 0
	// while it runs.
	SteppedAside = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Namespace: namespace, Subsystem: "lifecycle_controller", Name: "stepped_aside",
		Help: "1 once evictionrequest-controller's own controller (label controller: evictionrequest-controller or imperative-eviction-responder-controller) " +
			"stepped aside for kube-controller-manager's of the same name (Kubernetes 1.38 and later), 0 while it runs.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"controller"})
	// StepAsideUntrustedWrites counts the writes under the field manager of
	// one of kube-controller-manager's controllers that the step-aside
	// guard saw but could not trust: the policy that reserves the name was
	// not in force, so anyone may have written them.
	StepAsideUntrustedWrites = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: namespace, Subsystem: "lifecycle_controller", Name: "step_aside_untrusted_writes_total",
		Help: "Number of writes under the field manager of kube-controller-manager's controller (label controller) that the step-aside guard saw " +
			"while the ValidatingAdmissionPolicy evictionrequest-reserved-field-managers was not in force: nothing proves who made them, so nothing stepped aside.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"controller"})
	// EvictorEvictions counts the default evictor's API-initiated evictions
	// by result.
	EvictorEvictions = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: namespace, Subsystem: "evictor", Name: "evictions_total",
		Help:           "Number of API-initiated evictions of pods by the default evictor, by result (success, blocked, failed).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"result"})

	// EvictionDuration observes, for each Eviction that ends, the time
	// from its creation to its end, by how it ended.
	EvictionDuration = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Namespace: namespace, Subsystem: "lifecycle_controller", Name: "eviction_duration_seconds",
		Help:           "Time from the creation of an Eviction to its end, by how it ended (TargetEvicted, Failed).",
		Buckets:        eviction.DurationBuckets,
		StabilityLevel: metrics.ALPHA,
	}, []string{"result"})
	// ResponderTimeouts counts the responders that missed their heartbeat
	// deadline; the ResponderTimedOut event on the Eviction names them.
	ResponderTimeouts = metrics.NewCounter(&metrics.CounterOpts{
		Namespace: namespace, Subsystem: "lifecycle_controller", Name: "responder_timeouts_total",
		Help:           "Number of times the active responder of an Eviction missed its heartbeat deadline and was Interrupted.",
		StabilityLevel: metrics.ALPHA,
	})

	activeResponderDesc = metrics.NewDesc(metrics.BuildFQName(namespace, "lifecycle_controller", "active_responder"),
		"Number of unfinished Evictions whose active responder is the labeled one.",
		[]string{"responder"}, nil, metrics.ALPHA, "")
	activeRequesterDesc = metrics.NewDesc(metrics.BuildFQName(namespace, "lifecycle_controller", "active_requester"),
		"Number of EvictionRequests of the labeled requester that ask for an eviction not yet over.",
		[]string{"requester"}, nil, metrics.ALPHA, "")
	evictionsDesc = metrics.NewDesc(metrics.BuildFQName(namespace, "lifecycle_controller", "evictions"),
		"Number of Evictions by state: InProgress, TargetEvicted or Failed.",
		[]string{"state"}, nil, metrics.ALPHA, "")
	oldestEvictionDesc = metrics.NewDesc(metrics.BuildFQName(namespace, "lifecycle_controller", "oldest_eviction_creation_timestamp_seconds"),
		"Creation time, in seconds since the epoch, of the oldest Eviction in progress; absent when none is.",
		nil, nil, metrics.ALPHA, "")
)

// The metrics the KEP names (kep.yaml), with the labels of the upstream pull
// requests (kubernetes/kubernetes#137133, #137396): one series per object,
// so that dashboards built for upstream's controller read this one. They
// are computed when /metrics is scraped, from the caches of the replica
// that leads, and go with their objects.
var (
	responderStateDesc = metrics.NewDesc("evictionrequest_controller_responder_state",
		"The state of each responder for the Eviction.",
		[]string{"namespace", "eviction", "target_name", "target_type", "responder", "state"}, nil, metrics.ALPHA, "")
	requesterIntentDesc = metrics.NewDesc("evictionrequest_controller_requester_intent",
		"The intent and target of the EvictionRequest.",
		[]string{"namespace", "evictionrequest", "target_name", "target_type", "requester", "intent"}, nil, metrics.ALPHA, "")
	targetRespondersDesc = metrics.NewDesc("evictionrequest_controller_target_responders",
		"The number of available responders for the target of the Eviction.",
		[]string{"namespace", "eviction", "target_name", "target_type"}, nil, metrics.ALPHA, "")
	failedEvictionsDesc = metrics.NewDesc("imperative_eviction_responder_controller_failed_evictions_total",
		"Number of evictions of the target of the Eviction that the Eviction API refused or failed, as the default evictor counts them.",
		[]string{"namespace", "eviction", "target_name", "target_type"}, nil, metrics.ALPHA, "")
)

// TargetTypePod is the target_type of a pod target.
const TargetTypePod = "pod"

// Object is one object's series of the KEP's metrics.
type Object struct {
	// Namespace and Name name the object (an Eviction, or an EvictionRequest
	// for RequesterIntent); Target is its pod's name.
	Namespace, Name, Target string
	// ResponderStates are an Eviction's target responders' states, by name.
	ResponderStates map[string]string
	// FailedEvictions counts an Eviction's refused evictions.
	FailedEvictions int
	// Requester and Intent are an EvictionRequest's.
	Requester, Intent string
}

// ObjectSource lists the objects whose series the KEP's metrics report.
type ObjectSource interface {
	MetricsObjects() (evictions, requests []Object)
}

// objectCollector reports the KEP's per-object metrics.
type objectCollector struct {
	metrics.BaseStableCollector
	source atomic.Pointer[ObjectSource]
}

func (c *objectCollector) DescribeWithStability(ch chan<- *metrics.Desc) {
	for _, d := range []*metrics.Desc{responderStateDesc, requesterIntentDesc, targetRespondersDesc, failedEvictionsDesc} {
		ch <- d
	}
}

func (c *objectCollector) CollectWithStability(ch chan<- metrics.Metric) {
	s := c.source.Load()
	if s == nil {
		return
	}
	evictions, requests := (*s).MetricsObjects()
	for _, ev := range evictions {
		for responder, state := range ev.ResponderStates {
			ch <- metrics.NewLazyConstMetric(responderStateDesc, metrics.GaugeValue, 1, ev.Namespace, ev.Name, ev.Target, TargetTypePod, responder, state)
		}
		ch <- metrics.NewLazyConstMetric(targetRespondersDesc, metrics.GaugeValue, float64(len(ev.ResponderStates)), ev.Namespace, ev.Name, ev.Target, TargetTypePod)
		if ev.FailedEvictions > 0 {
			ch <- metrics.NewLazyConstMetric(failedEvictionsDesc, metrics.CounterValue, float64(ev.FailedEvictions), ev.Namespace, ev.Name, ev.Target, TargetTypePod)
		}
	}
	for _, er := range requests {
		ch <- metrics.NewLazyConstMetric(requesterIntentDesc, metrics.GaugeValue, 1, er.Namespace, er.Name, er.Target, TargetTypePod, er.Requester, er.Intent)
	}
}

// Snapshot is the state the gauges report, computed when /metrics is
// scraped.
type Snapshot struct {
	// ActiveResponders counts unfinished Evictions by active responder.
	ActiveResponders map[string]int
	// ActiveRequesters counts requests that want an unfinished eviction,
	// by requester.
	ActiveRequesters map[string]int
	// Evictions counts Evictions by state.
	Evictions map[string]int
	// OldestInProgress is when the oldest Eviction in progress was
	// created, zero when none is.
	OldestInProgress time.Time
}

// Source computes a Snapshot; the controller is the source while it leads.
type Source interface {
	MetricsSnapshot() Snapshot
}

var (
	registerOnce sync.Once
	gauges       = scrapegauges.NewCollector(activeResponderDesc, activeRequesterDesc, evictionsDesc, oldestEvictionDesc)
	objects      = &objectCollector{}
)

// Register registers the metrics with the legacy registry, once.
func Register() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(EvictionsCreated, ResponderTurns, EvictorEvictions, EvictionDuration, ResponderTimeouts, SteppedAside, StepAsideUntrustedWrites)
		legacyregistry.CustomMustRegister(gauges, objects)
	})
}

// SetSource makes s the source of the gauges and of the KEP's per-object
// metrics; nil reports none.
func SetSource(s interface {
	Source
	ObjectSource
}) {
	if s == nil {
		gauges.SetSource(nil)
		objects.source.Store(nil)
		return
	}
	var o ObjectSource = s
	objects.source.Store(&o)
	gauges.SetSource(func() []map[string]int {
		snapshot := s.MetricsSnapshot()
		return []map[string]int{snapshot.ActiveResponders, snapshot.ActiveRequesters, snapshot.Evictions,
			scrapegauges.Timestamp(snapshot.OldestInProgress)}
	})
}
