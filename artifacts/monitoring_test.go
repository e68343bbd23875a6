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
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

var promtool = flag.String("promtool", "../_output/bin/promtool", "promtool, which make test-unit builds from the Go module proxy.")

// alertsTest is the promtool test of the chart's alerting rules.
const alertsTest = "../charts/evictionrequest/tests/alerts-test.yaml"

// The monitors select what the overlay deploys: the ServiceMonitor the
// server's Service and its port, each PodMonitor the pods of a Deployment
// and their metrics port.
func TestMonitoringScrapesWhatTheOverlayDeploys(t *testing.T) {
	for overlay, monitored := range map[string][]string{
		MonitoringOverlay: {"ServiceMonitor/evictionrequest-apiserver", "PodMonitor/evictionrequest-controller", "PodMonitor/evictionrequest-surge-interceptor"},
	} {
		t.Run(overlay, func(t *testing.T) {
			objects := render(t, overlay)
			for _, ref := range monitored {
				kind, name, _ := strings.Cut(ref, "/")
				monitor := find(objects, kind, name)
				if monitor == nil {
					t.Fatalf("%s is not rendered", ref)
				}
				selector, _, _ := unstructured.NestedStringMap(monitor.Object, "spec", "selector", "matchLabels")
				endpoints := "endpoints"
				if kind == "PodMonitor" {
					endpoints = "podMetricsEndpoints"
				}
				list, _, _ := unstructured.NestedSlice(monitor.Object, "spec", endpoints)
				if len(list) != 1 {
					t.Fatalf("%s has %d endpoints, want 1", ref, len(list))
				}
				port := list[0].(map[string]interface{})["port"].(string)
				if !scrapes(t, objects, kind, labels.SelectorFromSet(selector), port) {
					t.Errorf("%s selects %v port %s, which nothing in overlay %s serves", ref, selector, port, overlay)
				}
			}
			if find(objects, "PrometheusRule", "evictionrequest") == nil {
				t.Error("the PrometheusRule is not rendered")
			}
			checkDashboard(t, objects)
		})
	}
}

// scrapes is true when a Service (for a ServiceMonitor) or a Deployment's
// pods (for a PodMonitor) match selector and have the named port.
func scrapes(t *testing.T, objects []*unstructured.Unstructured, monitorKind string, selector labels.Selector, port string) bool {
	t.Helper()
	for _, obj := range objects {
		switch {
		case monitorKind == "ServiceMonitor" && obj.GetKind() == "Service":
			var svc corev1.Service
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &svc); err != nil {
				t.Fatal(err)
			}
			for _, p := range svc.Spec.Ports {
				if selector.Matches(labels.Set(svc.Labels)) && p.Name == port {
					return true
				}
			}
		case monitorKind == "PodMonitor" && obj.GetKind() == "Deployment":
			d := deployments(t, []*unstructured.Unstructured{obj})[obj.GetName()]
			for _, c := range d.Spec.Template.Spec.Containers {
				for _, p := range c.Ports {
					if selector.Matches(labels.Set(d.Spec.Template.Labels)) && p.Name == port {
						return true
					}
				}
			}
		}
	}
	return false
}

// checkDashboard: the dashboard ConfigMap carries the sidecar's label and
// a dashboard Grafana can load.
func checkDashboard(t *testing.T, objects []*unstructured.Unstructured) {
	t.Helper()
	cm := find(objects, "ConfigMap", "evictionrequest-dashboard")
	if cm == nil {
		t.Fatal("the dashboard ConfigMap is not rendered")
	}
	if cm.GetLabels()["grafana_dashboard"] != "1" {
		t.Errorf("dashboard labels = %v, want grafana_dashboard=1 for Grafana's sidecar", cm.GetLabels())
	}
	data, _, _ := unstructured.NestedString(cm.Object, "data", "evictionrequest.json")
	var dashboard struct {
		UID    string `json:"uid"`
		Panels []struct {
			Type    string `json:"type"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal([]byte(data), &dashboard); err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	queries := 0
	for _, p := range dashboard.Panels {
		for _, target := range p.Targets {
			if target.Expr == "" {
				t.Errorf("a %s panel has a target without a query", p.Type)
			}
			queries++
		}
	}
	if dashboard.UID == "" || queries == 0 {
		t.Errorf("dashboard uid %q with %d queries, want a uid and queries", dashboard.UID, queries)
	}
}

// The PrometheusRule's groups pass `promtool check rules`, and each alert
// fires, and stays silent, as tests/alerts-test.yaml says.
func TestAlertingRules(t *testing.T) {
	bin, err := filepath.Abs(*promtool)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("promtool: %v (make test-unit builds it into _output/bin; or pass -promtool)", err)
	}
	rule := find(render(t, MonitoringOverlay), "PrometheusRule", "evictionrequest")
	if rule == nil {
		t.Fatal("the PrometheusRule is not rendered")
	}
	spec, err := yaml.Marshal(rule.Object["spec"])
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rules.yaml"), spec, 0o644); err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile(alertsTest)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "alerts-test.yaml"), tests, 0o644); err != nil {
		t.Fatal(err)
	}
	// Every alert has a test.
	groups, _, _ := unstructured.NestedSlice(rule.Object, "spec", "groups")
	for _, g := range groups {
		rules, _, _ := unstructured.NestedSlice(g.(map[string]interface{}), "rules")
		for _, r := range rules {
			if alert, _ := r.(map[string]interface{})["alert"].(string); !strings.Contains(string(tests), "alertname: "+alert+"\n") {
				t.Errorf("alert %s has no test in %s", alert, alertsTest)
			}
		}
	}
	for _, args := range [][]string{{"check", "rules", "rules.yaml"}, {"test", "rules", "alerts-test.yaml"}} {
		cmd := exec.CommandContext(t.Context(), bin, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %v: %v\n%s", args, err, out)
		}
	}
}
