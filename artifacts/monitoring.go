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

package artifacts

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// monitoredMetric matches the names of the project's metrics, and of the
// Kubernetes metrics the monitoring overlay reads, in a PromQL
// expression.
var monitoredMetric = regexp.MustCompile(`\b(evictionrequest_[a-z_]+|imperative_eviction_[a-z_]+|leader_election_master_status|apiserver_admission_webhook_[a-z_]+|aggregator_unavailable_apiservice|workqueue_depth)\b`)

// MonitoredMetrics returns the names of the metric families the alerting
// rules and the dashboard of the monitoring overlay read, sorted: a
// histogram's _bucket series are named by their family. Its _sum and _count
// are not read (a quantile needs the buckets), and names such as
// kube-apiserver's apiserver_admission_webhook_rejection_count are
// counters' own.
func MonitoredMetrics() ([]string, error) {
	data, err := manifests.ReadFile("overlays/" + MonitoringOverlay + "/install.yaml")
	if err != nil {
		return nil, err
	}
	objects, err := Decode(data)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, obj := range objects {
		rule := obj.GetKind() == "PrometheusRule"
		dashboard := obj.GetKind() == "ConfigMap" && obj.GetName() == DashboardConfigMap
		if !rule && !dashboard {
			continue
		}
		text, err := yaml.Marshal(obj.Object)
		if err != nil {
			return nil, err
		}
		for _, name := range monitoredMetric.FindAllString(string(text), -1) {
			names = append(names, strings.TrimSuffix(name, "_bucket"))
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("the %s overlay has no PrometheusRule nor dashboard", MonitoringOverlay)
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// DashboardConfigMap is the ConfigMap of the Grafana dashboard.
const DashboardConfigMap = "evictionrequest-dashboard"
