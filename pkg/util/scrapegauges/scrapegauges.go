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

// Package scrapegauges reports gauges of counts by one label, computed
// when /metrics is scraped from the caches of the replica that leads, so
// that they cannot drift from what they count; the names they count come
// from whoever may create pods or requests, so each gauge reports a bounded
// number of label values. The controllers of both EvictionRequest APIs
// report their state through it.
package scrapegauges

import (
	"sort"
	"sync/atomic"
	"time"

	"k8s.io/component-base/metrics"
)

// MaxLabelValues bounds the distinct label values each gauge reports: every
// value is a series of its own. The largest counts are reported by name,
// the rest summed under OtherLabelValue.
const MaxLabelValues = 50

// OtherLabelValue is the label of the counts past MaxLabelValues.
const OtherLabelValue = "<other>"

// NoLabel is the key of the one value of a gauge described without a
// label, such as a timestamp.
const NoLabel = ""

// Source returns the counts of each gauge, in the order of the collector's
// descriptions.
type Source func() []map[string]int

// Collector reports the gauges of its descriptions, each with one label
// (or none, its value under NoLabel), from its current Source.
type Collector struct {
	metrics.BaseStableCollector
	descs  []*metrics.Desc
	source atomic.Pointer[Source]
}

// NewCollector returns a collector of the gauges descs, with no source.
func NewCollector(descs ...*metrics.Desc) *Collector {
	return &Collector{descs: descs}
}

// SetSource makes s the source of the gauges; nil, on a replica that does
// not lead, reports none rather than stale numbers.
func (c *Collector) SetSource(s Source) {
	if s == nil {
		c.source.Store(nil)
		return
	}
	c.source.Store(&s)
}

// DescribeWithStability describes the gauges.
func (c *Collector) DescribeWithStability(ch chan<- *metrics.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

// CollectWithStability reports the gauges from the current source.
func (c *Collector) CollectWithStability(ch chan<- metrics.Metric) {
	s := c.source.Load()
	if s == nil {
		return
	}
	for i, counts := range (*s)() {
		if i >= len(c.descs) {
			break
		}
		for label, count := range Bounded(counts, MaxLabelValues) {
			if label == NoLabel {
				ch <- metrics.NewLazyConstMetric(c.descs[i], metrics.GaugeValue, float64(count))
				continue
			}
			ch <- metrics.NewLazyConstMetric(c.descs[i], metrics.GaugeValue, float64(count), label)
		}
	}
}

// Bounded keeps the max-1 largest counts (ties broken by name) and sums the
// rest under OtherLabelValue, when there are more than max.
func Bounded(counts map[string]int, max int) map[string]int {
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

// Timestamp is the counts of a gauge without a label whose value is t in
// seconds since the epoch, reported only when t is set.
func Timestamp(t time.Time) map[string]int {
	if t.IsZero() {
		return nil
	}
	return map[string]int{NoLabel: int(t.Unix())}
}
