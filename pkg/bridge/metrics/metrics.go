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

// Package metrics holds the metrics of the eviction API bridge.
package metrics

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

const (
	namespace = "evictionrequest"
	subsystem = "eviction_bridge"
)

var (
	// Decisions counts the evictions the bridge answered, by outcome.
	Decisions = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "decisions_total",
		Help:           "Evictions (pods/eviction) the eviction API bridge answered, by outcome: allowed (not-opted-in, no-participants, pod-gone, pod-terminating, exempt, eviction-step, request-complete, participants-skipped: a drain's escalation of a caller that may delete the pod) or refused with 429 (requested, in-progress, cancellation-forbidden; failed: the pod is protected and the bridge could not read or write its request or mark the pod, or review the caller's access, the pod stays) or 403 (skip-forbidden: an escalation of a caller that may not delete the pod); error when it could not tell whether the pod is protected (kube-apiserver applies the webhook's failurePolicy).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"outcome"})
	// DecisionDuration is how long the bridge took to answer.
	DecisionDuration = metrics.NewHistogram(&metrics.HistogramOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "decision_duration_seconds",
		Help:           "How long the eviction API bridge took to answer an eviction, writes included.",
		Buckets:        []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5},
		StabilityLevel: metrics.ALPHA,
	})
	// Withdrawals counts the requests the bridge withdrew from because no
	// eviction of their pod reached it for the inactivity time-out.
	Withdrawals = metrics.NewCounter(&metrics.CounterOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "withdrawals_total",
		Help:           "EvictionRequests the eviction API bridge withdrew from because no eviction of their pod reached it for the inactivity time-out.",
		StabilityLevel: metrics.ALPHA,
	})
	// RefusedCalls counts the calls of the webhook the bridge refused
	// because they did not come from kube-apiserver.
	RefusedCalls = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "refused_calls_total",
		Help:           "Calls of the eviction API bridge's webhook refused before their body was read because the caller did not prove it is kube-apiserver (--eviction-bridge-client-ca-file), by reason: unauthenticated (401) or forbidden (403, a certificate of another name).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"reason"})
)

// OutcomeError labels a decision the bridge could not make: it could not
// read the namespace or the pod.
const OutcomeError = "error"

var registerOnce sync.Once

// Register registers the metrics with the legacy registry, once.
func Register() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(Decisions, DecisionDuration, Withdrawals, RefusedCalls)
	})
}
