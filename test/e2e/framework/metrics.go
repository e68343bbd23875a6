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

package framework

import (
	"regexp"
	"strconv"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// MetricSamples is the text of a server's /metrics.
type MetricSamples []byte

// ScrapeMetrics reads /metrics of the server config points at.
func ScrapeMetrics(t testing.TB, config *rest.Config) MetricSamples {
	t.Helper()
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	body, err := client.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(t.Context())
	if err != nil {
		t.Fatalf("GET %s/metrics: %v", config.Host, err)
	}
	return body
}

// Value returns the value of one sample, such as
// `evictionrequest_controller_evictions_total{result="success"}`, and whether it is there.
func (m MetricSamples) Value(sample string) (float64, bool) {
	match := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(sample) + ` ([0-9.e+]+)$`).FindSubmatch(m)
	if match == nil {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(match[1]), 64)
	return v, err == nil
}
