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

// Package metrics holds the Prometheus metrics of the eviction request
// controller, served on the server's /metrics.
package metrics

import (
	"sync"
	"time"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"

	"github.com/evictionrequest/apiserver/pkg/controller/eviction"
	"github.com/evictionrequest/apiserver/pkg/util/scrapegauges"

	// The workqueue of the controller reports depth, adds, latency and
	// retries under the name evictionrequests through this provider.
	_ "k8s.io/component-base/metrics/prometheus/workqueue"
)

const (
	namespace = "evictionrequest"
	subsystem = "controller"
)

// Evictions counts the API-initiated evictions of the controller by result.
var Evictions = metrics.NewCounterVec(&metrics.CounterOpts{
	Namespace:      namespace,
	Subsystem:      subsystem,
	Name:           "evictions_total",
	Help:           "Number of API-initiated evictions of pods by the eviction request controller, by result (success, blocked, failed).",
	StabilityLevel: metrics.ALPHA,
}, []string{"result"})

// RequestDuration observes, for each EvictionRequest the controller
// completes, the time from its creation to its completion: how long a
// requester waited for the pod to go, interceptors included.
var RequestDuration = metrics.NewHistogramVec(&metrics.HistogramOpts{
	Namespace:      namespace,
	Subsystem:      subsystem,
	Name:           "request_duration_seconds",
	Help:           "Time from the creation of an EvictionRequest to its completion, by the reason it completed (PodDeleted, PodTerminated, Canceled).",
	Buckets:        eviction.DurationBuckets,
	StabilityLevel: metrics.ALPHA,
}, []string{"reason"})

// InterceptorTimeouts counts the interceptors that missed their heartbeat
// deadline and were passed over, the next interceptor or the Eviction API
// taking their turn. The InterceptorTimedOut event on the request names the
// interceptor; a label per name would grow with every interceptor a pod
// declares.
var InterceptorTimeouts = metrics.NewCounter(&metrics.CounterOpts{
	Namespace:      namespace,
	Subsystem:      subsystem,
	Name:           "interceptor_timeouts_total",
	Help:           "Number of times the active interceptor of an EvictionRequest missed its heartbeat deadline and was passed over.",
	StabilityLevel: metrics.ALPHA,
})

var (
	activeInterceptorDesc = metrics.NewDesc(metrics.BuildFQName(namespace, subsystem, "active_interceptor"),
		"Number of in-progress EvictionRequests whose active interceptor is the labeled one.",
		[]string{"interceptor"}, nil, metrics.ALPHA, "")
	activeRequesterDesc = metrics.NewDesc(metrics.BuildFQName(namespace, subsystem, "active_requester"),
		"Number of in-progress EvictionRequests the labeled requester asks for.",
		[]string{"requester"}, nil, metrics.ALPHA, "")
	podInterceptorsDesc = metrics.NewDesc(metrics.BuildFQName(namespace, subsystem, "pod_interceptors"),
		"Number of pods that declare the labeled interceptor.",
		[]string{"interceptor"}, nil, metrics.ALPHA, "")
	oldestRequestDesc = metrics.NewDesc(metrics.BuildFQName(namespace, subsystem, "oldest_request_creation_timestamp_seconds"),
		"Creation time, in seconds since the epoch, of the oldest EvictionRequest in progress; absent when none is.",
		nil, nil, metrics.ALPHA, "")
)

// MaxLabelValues and OtherLabelValue bound the label values each gauge
// reports (see scrapegauges).
const (
	MaxLabelValues  = scrapegauges.MaxLabelValues
	OtherLabelValue = scrapegauges.OtherLabelValue
)

// InvalidLabelValue counts the interceptor names of pods that the server
// would refuse, which are not reported by name.
const InvalidLabelValue = "<invalid>"

// Snapshot is the state the gauges report, computed when /metrics is scraped.
type Snapshot struct {
	// ActiveInterceptors counts in-progress requests by active interceptor.
	ActiveInterceptors map[string]int
	// ActiveRequesters counts in-progress requests by requester.
	ActiveRequesters map[string]int
	// PodInterceptors counts pods by declared interceptor.
	PodInterceptors map[string]int
	// OldestInProgress is when the oldest request in progress was created,
	// zero when none is.
	OldestInProgress time.Time
}

// Source computes a Snapshot; the controller is the source while it leads.
type Source interface {
	MetricsSnapshot() Snapshot
}

var (
	registerOnce sync.Once
	gauges       = scrapegauges.NewCollector(activeInterceptorDesc, activeRequesterDesc, podInterceptorsDesc, oldestRequestDesc)
)

// Register registers the metrics with the server's registry, once.
func Register() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(Evictions, RequestDuration, InterceptorTimeouts)
		legacyregistry.CustomMustRegister(gauges)
	})
}

// SetSource makes s the source of the gauges; nil, on a replica that does not
// lead, reports none rather than stale numbers.
func SetSource(s Source) {
	if s == nil {
		gauges.SetSource(nil)
		return
	}
	gauges.SetSource(func() []map[string]int {
		snapshot := s.MetricsSnapshot()
		return []map[string]int{snapshot.ActiveInterceptors, snapshot.ActiveRequesters, snapshot.PodInterceptors,
			scrapegauges.Timestamp(snapshot.OldestInProgress)}
	})
}
