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
)

// Register registers the metrics with the legacy registry, once.
func Register() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(EvictionsCreated, ResponderTurns, EvictorEvictions, EvictionDuration, ResponderTimeouts)
		legacyregistry.CustomMustRegister(gauges)
	})
}

// SetSource makes s the source of the gauges; nil reports none.
func SetSource(s Source) {
	if s == nil {
		gauges.SetSource(nil)
		return
	}
	gauges.SetSource(func() []map[string]int {
		snapshot := s.MetricsSnapshot()
		return []map[string]int{snapshot.ActiveResponders, snapshot.ActiveRequesters, snapshot.Evictions,
			scrapegauges.Timestamp(snapshot.OldestInProgress)}
	})
}
