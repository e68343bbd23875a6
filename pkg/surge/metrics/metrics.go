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

// Package metrics holds the Prometheus metrics of the surge interceptor.
package metrics

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

const (
	namespace = "evictionrequest"
	subsystem = "surge_interceptor"
)

var (
	// InProgress is the number of pods whose replacement is surging.
	InProgress = metrics.NewGauge(&metrics.GaugeOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "surges_in_progress",
		Help:           "Number of pods a surge of their Deployment is replacing now.",
		StabilityLevel: metrics.ALPHA,
	})
	// Completed counts the pods replaced by a surge.
	Completed = metrics.NewCounter(&metrics.CounterOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "surges_completed_total",
		Help:           "Number of pods replaced by a surge: removed by their ReplicaSet once the Deployment was scaled back.",
		StabilityLevel: metrics.ALPHA,
	})
	// Reverted counts the surges undone because their request was withdrawn,
	// canceled, deleted or passed over.
	Reverted = metrics.NewCounter(&metrics.CounterOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "surges_reverted_total",
		Help:           "Number of surges undone because their EvictionRequest was withdrawn, canceled, deleted or passed to another interceptor.",
		StabilityLevel: metrics.ALPHA,
	})
	// Retried counts the surges made again because the ReplicaSet kept the
	// pod when the Deployment was scaled back.
	Retried = metrics.NewCounter(&metrics.CounterOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "surges_retried_total",
		Help:           "Number of surges made again because the ReplicaSet removed another pod than the one being replaced when the Deployment was scaled back.",
		StabilityLevel: metrics.ALPHA,
	})
	// PassedOn counts the requests passed on at once, by reason.
	PassedOn = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "passed_on_total",
		Help:           "Number of EvictionRequests the surge interceptor passed on without a surge, by reason.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"reason"})
)

var registerOnce sync.Once

// Register registers the metrics with the legacy registry, once.
func Register() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(InProgress, Completed, Reverted, Retried, PassedOn)
	})
}
