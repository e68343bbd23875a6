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

// Package metrics holds the metrics of the controller that deletes
// completed EvictionRequests after their time to live.
package metrics

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// Deleted counts the completed requests deleted after their time to live.
var Deleted = metrics.NewCounter(&metrics.CounterOpts{
	Namespace: "evictionrequest", Subsystem: "ttl_after_complete", Name: "deletions_total",
	Help:           "EvictionRequests deleted because they completed longer ago than --completed-evictionrequest-ttl.",
	StabilityLevel: metrics.ALPHA,
})

var registerOnce sync.Once

// Register registers the metrics with the legacy registry, once.
func Register() {
	registerOnce.Do(func() { legacyregistry.MustRegister(Deleted) })
}
