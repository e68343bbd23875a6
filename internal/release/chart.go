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

package release

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// ChartDir is the chart, whose Chart.yaml and values.yaml Pin rewrites.
const ChartDir = "charts/evictionrequest"

var (
	chartVersionLine    = regexp.MustCompile(`(?m)^(version:\s*).*$`)
	chartAppVersionLine = regexp.MustCompile(`(?m)^(appVersion:\s*).*$`)
	// imageRepositoryLine is image.repository of values.yaml: the first
	// repository key under the top-level image key, past its comments.
	imageRepositoryLine = regexp.MustCompile(`(?m)^(image:\n(?:\s+#.*\n)*\s+repository:[ \t]*).*$`)
)

// Pin pins the image of a release in the chart, repository and tag
// together: values.yaml's image.repository becomes repository, and
// Chart.yaml's version and appVersion become version (vX.Y.Z, written
// without its v, as charts version themselves), so that the image tag,
// "v" + appVersion, is the release's. make manifests then renders the
// overlays with that image.
func Pin(chartDir, repository, version string) error {
	if !semver.MatchString(version) || repository == "" {
		return fmt.Errorf("pin needs a version vX.Y.Z and a repository, got %q and %q", version, repository)
	}
	chartFile, valuesFile := filepath.Join(chartDir, "Chart.yaml"), filepath.Join(chartDir, "values.yaml")
	chart, err := os.ReadFile(chartFile)
	if err != nil {
		return err
	}
	values, err := os.ReadFile(valuesFile)
	if err != nil {
		return err
	}
	if !imageRepositoryLine.Match(values) {
		return fmt.Errorf("%s has no image.repository", valuesFile)
	}
	bare := strings.TrimPrefix(version, "v")
	chart = chartVersionLine.ReplaceAll(chart, []byte("${1}"+bare))
	chart = chartAppVersionLine.ReplaceAll(chart, []byte(`${1}"`+bare+`"`))
	if err := os.WriteFile(chartFile, chart, 0o644); err != nil {
		return err
	}
	return os.WriteFile(valuesFile, imageRepositoryLine.ReplaceAll(values, []byte("${1}"+repository)), 0o644)
}

// packChart packages the chart as the release's (evictionrequest-X.Y.Z.tgz)
// and writes the chart repository's index.yaml, whose entry points at the
// release's download URL.
func packChart(o Options) error {
	if o.ChartDir == "" {
		return nil
	}
	bare := strings.TrimPrefix(o.Version, "v")
	if err := run(o.Helm, "package", o.ChartDir, "--version="+bare, "--app-version="+bare, "--destination="+o.Out); err != nil {
		return err
	}
	return run(o.Helm, "repo", "index", o.Out, "--url="+o.DownloadURL+"/"+o.Version)
}

// run runs a tool, its output in the error when it fails.
func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out)
	}
	return nil
}
