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
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/evictionrequest/apiserver/artifacts"
	"github.com/evictionrequest/apiserver/internal/localcluster"
	"github.com/evictionrequest/apiserver/pkg/bridge"
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

// ScrapeProcessMetrics reads the /metrics a workload of the local control
// plane serves over HTTPS (a controller's, the surge interceptor's), as a
// scraper its authorization lets through.
func ScrapeProcessMetrics(t testing.TB, p *localcluster.Process) MetricSamples {
	t.Helper()
	status, body := GetMetrics(t, p.MetricsClient, p.MetricsURL, "")
	if status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", p.MetricsURL, status, body)
	}
	return body
}

// GetMetrics is the status and body of GET url with client, presenting
// token as a bearer token when it is not empty.
func GetMetrics(t testing.TB, client *http.Client, url, token string) (int, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode, body
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

// Sample returns the value of one sample, failing t (and returning 0)
// when m lacks it.
func (m MetricSamples) Sample(t testing.TB, sample string) float64 {
	t.Helper()
	v, ok := m.Value(sample)
	if !ok {
		t.Errorf("/metrics lacks %s", sample)
	}
	return v
}

// WaitForSample scrapes until sample has the value want and returns that
// scrape: a gauge read from a component's cache may see an object a
// moment after the test's watch did.
func WaitForSample(t testing.TB, scrape func() MetricSamples, sample string, want float64) MetricSamples {
	t.Helper()
	var samples MetricSamples
	Eventually(t, 30*time.Second, sample+" to be "+strconv.FormatFloat(want, 'g', -1, 64), func(context.Context) error {
		samples = scrape()
		if v, ok := samples.Value(sample); !ok || v != want {
			return fmt.Errorf("%s = %v (reported: %v)", sample, v, ok)
		}
		return nil
	})
	return samples
}

// Has is true when the metric family name, such as a histogram's
// `evictionrequest_controller_request_duration_seconds`, has samples.
func (m MetricSamples) Has(name string) bool {
	return regexp.MustCompile(`(?m)^# TYPE ` + regexp.QuoteMeta(name) + ` `).Match(m)
}

// CheckMonitoredMetrics fails t for each metric the monitoring component's
// rules and dashboard read, among those whose name has one of prefixes
// (and none of the prefixes written "!prefix"), that m lacks: a renamed
// metric would leave an alert silent.
func CheckMonitoredMetrics(t testing.TB, m MetricSamples, prefixes ...string) {
	t.Helper()
	names, err := artifacts.MonitoredMetrics()
	if err != nil {
		t.Fatal(err)
	}
	has := func(name string, negated bool) bool {
		return slices.ContainsFunc(prefixes, func(p string) bool {
			exclude := strings.HasPrefix(p, "!")
			return exclude == negated && strings.HasPrefix(name, strings.TrimPrefix(p, "!"))
		})
	}
	checked := 0
	for _, name := range names {
		if !has(name, false) || has(name, true) {
			continue
		}
		checked++
		if !m.Has(name) {
			t.Errorf("the monitoring component reads %s, which /metrics lacks", name)
		}
	}
	if checked == 0 {
		t.Errorf("the monitoring component reads no metric named %v", prefixes)
	}
}

// CheckBridgeMetrics fails t unless bridge, the /metrics of the binary that
// serves the eviction API bridge, and apiserver, kube-apiserver's, show an
// eviction the bridge refused, and hold what the monitoring component reads
// of the bridge.
func CheckBridgeMetrics(t testing.TB, bridgeMetrics, apiserver MetricSamples) {
	t.Helper()
	refused := `evictionrequest_eviction_bridge_decisions_total{outcome="` + bridge.OutcomeRequested + `"}`
	if v := bridgeMetrics.Sample(t, refused); v < 1 {
		t.Errorf("%s = %v, want at least the refusal of this test", refused, v)
	}
	if v := bridgeMetrics.Sample(t, "evictionrequest_eviction_bridge_decision_duration_seconds_count"); v < 1 {
		t.Errorf("decision_duration_seconds_count = %v, want at least the decision of this test", v)
	}
	CheckMonitoredMetrics(t, bridgeMetrics, "evictionrequest_eviction_bridge_")
	rejected := `apiserver_admission_webhook_rejection_count{error_type="no_error",name="` + bridge.WebhookName +
		`",operation="CREATE",rejection_code="429",type="validating"}`
	if v := apiserver.Sample(t, rejected); v < 1 {
		t.Errorf("kube-apiserver's %s = %v, want at least the refusal of this test", rejected, v)
	}
	CheckMonitoredMetrics(t, apiserver, "apiserver_admission_webhook_admission_duration_seconds", "apiserver_admission_webhook_rejection_count")
}
