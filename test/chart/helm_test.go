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

// Package chart checks the Helm chart (charts/evictionrequest), the one
// source of the install: the overlays of artifacts/ are rendered from it
// (make manifests, checked by make verify). It checks that the chart's
// README documents every value, that every value changes what the chart
// renders, and that its schema refuses what is not a value. It runs the
// helm binary of -helm.
package chart

import (
	"flag"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/evictionrequest/apiserver/artifacts"
)

var helm = flag.String("helm", "../../_output/bin/helm", "The helm binary (make helm builds it).")

// chartDir is the chart.
var chartDir = filepath.Join("..", "..", "charts", "evictionrequest")

// namespace is where the overlays install, and the chart in the tests.
const namespace = "evictionrequest-system"

// helmTemplate renders the chart with args, as helm install would.
func helmTemplate(t *testing.T, args ...string) ([]*unstructured.Unstructured, error) {
	t.Helper()
	out, err := runHelm(append([]string{"template", "evictionrequest", chartDir, "--namespace=" + namespace}, args...)...)
	if err != nil {
		return nil, err
	}
	return artifacts.Decode([]byte(out))
}

// runHelm runs helm with args and returns its output; the error holds it.
func runHelm(args ...string) (string, error) {
	cmd := exec.Command(*helm, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), &helmError{args: args, err: err, out: string(out)}
	}
	return string(out), nil
}

type helmError struct {
	args []string
	err  error
	out  string
}

func (e *helmError) Error() string {
	return "helm " + strings.Join(e.args, " ") + ": " + e.err.Error() + "\n" + e.out
}

// ciValues is the scenario's values file.
func ciValues(scenario string) string {
	return filepath.Join(chartDir, "ci", scenario+"-values.yaml")
}
