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
	"sort"
	"sync"
	"sync/atomic"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"

	// The workqueue of the controller reports depth, adds, latency and
	// retries under the name evictionrequests through this provider.
	_ "k8s.io/component-base/metrics/prometheus/workqueue"
)

const (
	namespace = "evictionrequest"
	subsystem = "controller"
)

// Results of an API-initiated eviction, the label of Evictions.
const (
	// ResultSuccess is an eviction the Eviction API accepted.
	ResultSuccess = "success"
	// ResultBlocked is an eviction refused with 429, usually by a PodDisruptionBudget.
	ResultBlocked = "blocked"
	// ResultFailed is an eviction that failed otherwise: a webhook, a conflict, a 5xx.
	ResultFailed = "failed"
)

// Evictions counts the API-initiated evictions of the controller by result.
var Evictions = metrics.NewCounterVec(&metrics.CounterOpts{
	Namespace:      namespace,
	Subsystem:      subsystem,
	Name:           "evictions",
	Help:           "Number of API-initiated evictions of pods by the eviction request controller, by result (success, blocked, failed).",
	StabilityLevel: metrics.ALPHA,
}, []string{"result"})

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
)

// MaxLabelValues bounds the distinct label values each gauge reports: the
// names come from whoever may create pods or EvictionRequests, and every
// value is a series of its own. The largest counts are reported by name,
// the rest summed under OtherLabelValue.
const MaxLabelValues = 50

// OtherLabelValue is the label of the counts past MaxLabelValues.
const OtherLabelValue = "<other>"

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
}

// Source computes a Snapshot; the controller is the source while it leads.
type Source interface {
	MetricsSnapshot() Snapshot
}

var (
	registerOnce sync.Once
	source       atomic.Pointer[Source]
)

// Register registers the metrics with the server's registry, once.
func Register() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(Evictions)
		legacyregistry.CustomMustRegister(&stateCollector{})
	})
}

// SetSource makes s the source of the gauges; nil, on a replica that does not
// lead, reports none rather than stale numbers.
func SetSource(s Source) {
	if s == nil {
		source.Store(nil)
		return
	}
	source.Store(&s)
}

// stateCollector reports the gauges from the current Source at scrape time,
// so they cannot drift from the informer caches they are computed from.
type stateCollector struct {
	metrics.BaseStableCollector
}

func (c *stateCollector) DescribeWithStability(ch chan<- *metrics.Desc) {
	ch <- activeInterceptorDesc
	ch <- activeRequesterDesc
	ch <- podInterceptorsDesc
}

func (c *stateCollector) CollectWithStability(ch chan<- metrics.Metric) {
	s := source.Load()
	if s == nil {
		return
	}
	snapshot := (*s).MetricsSnapshot()
	for _, gauge := range []struct {
		desc   *metrics.Desc
		counts map[string]int
	}{
		{activeInterceptorDesc, snapshot.ActiveInterceptors},
		{activeRequesterDesc, snapshot.ActiveRequesters},
		{podInterceptorsDesc, snapshot.PodInterceptors},
	} {
		for label, count := range bounded(gauge.counts, MaxLabelValues) {
			ch <- metrics.NewLazyConstMetric(gauge.desc, metrics.GaugeValue, float64(count), label)
		}
	}
}

// bounded keeps the max-1 largest counts (ties broken by name) and sums the
// rest under OtherLabelValue, when there are more than max.
func bounded(counts map[string]int, max int) map[string]int {
	if len(counts) <= max {
		return counts
	}
	labels := make([]string, 0, len(counts))
	for label := range counts {
		labels = append(labels, label)
	}
	sort.Slice(labels, func(i, j int) bool {
		if counts[labels[i]] != counts[labels[j]] {
			return counts[labels[i]] > counts[labels[j]]
		}
		return labels[i] < labels[j]
	})
	kept := make(map[string]int, max)
	for i, label := range labels {
		if i < max-1 {
			kept[label] = counts[label]
		} else {
			kept[OtherLabelValue] += counts[label]
		}
	}
	return kept
}
