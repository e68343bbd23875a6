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
	"regexp"
	"strings"
)

// ChartFile is the chart's Chart.yaml, whose version and appVersion Pin
// sets to the release's.
const ChartFile = "charts/evictionrequest/Chart.yaml"

var (
	chartVersionLine    = regexp.MustCompile(`(?m)^(version:\s*).*$`)
	chartAppVersionLine = regexp.MustCompile(`(?m)^(appVersion:\s*).*$`)
)

// PinChart rewrites the chart's version and appVersion to version (vX.Y.Z,
// written without its v, as charts version themselves): the chart's image
// tag, "v" + appVersion, is then the release's.
func PinChart(chartFile, version string) error {
	if !semver.MatchString(version) {
		return fmt.Errorf("pin needs a version vX.Y.Z, got %q", version)
	}
	data, err := os.ReadFile(chartFile)
	if err != nil {
		return err
	}
	bare := strings.TrimPrefix(version, "v")
	data = chartVersionLine.ReplaceAll(data, []byte("${1}"+bare))
	data = chartAppVersionLine.ReplaceAll(data, []byte(`${1}"`+bare+`"`))
	return os.WriteFile(chartFile, data, 0o644)
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
