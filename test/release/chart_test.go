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
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/evictionrequest/apiserver/internal/release"
)

// chartFiles are the files of the release's chart archive, by path.
func chartFiles(t *testing.T) map[string][]byte {
	t.Helper()
	return untarGz(t, read(t, chartArchive()))
}

// chartArchive is the name of the release's chart, as helm package names it.
func chartArchive() string {
	return "evictionrequest-" + strings.TrimPrefix(*version, "v") + ".tgz"
}

// The chart is the release's: its version and appVersion are the
// release's, and it renders the release's image, as helm installs it.
func TestTheChartIsTheRelease(t *testing.T) {
	files := chartFiles(t)
	var chart struct {
		Name, Version, AppVersion string
	}
	if err := yaml.Unmarshal(files["evictionrequest/Chart.yaml"], &chart); err != nil {
		t.Fatal(err)
	}
	bare := strings.TrimPrefix(*version, "v")
	if chart.Name != "evictionrequest" || chart.Version != bare || chart.AppVersion != bare {
		t.Errorf("Chart.yaml: %+v, want evictionrequest at version and appVersion %s", chart, bare)
	}
	for _, want := range []string{"evictionrequest/values.yaml", "evictionrequest/values.schema.json", "evictionrequest/README.md", "evictionrequest/templates/_helpers.tpl"} {
		if _, ok := files[want]; !ok {
			t.Errorf("the chart lacks %s", want)
		}
	}
	out, err := exec.Command(*helm, "template", "evictionrequest", filepath.Join(*dir, chartArchive()), "--namespace=evictionrequest-system",
		"--values="+filepath.Join("..", "..", "charts", "evictionrequest", "ci", "default-values.yaml")).CombinedOutput()
	if err != nil {
		t.Fatalf("helm template of the release's chart: %v\n%s", err, out)
	}
	image := "ghcr.io/evictionrequest/evictionrequest-apiserver:" + *version
	if !strings.Contains(string(out), "image: "+image) && !strings.Contains(string(out), `image: "`+image+`"`) {
		t.Errorf("the release's chart does not run %s:\n%s", image, out)
	}
}

// The chart repository's index lists the chart at the release's download
// URL, with its digest: helm repo add of the release's directory installs
// it.
func TestTheChartRepositoryIndexPointsAtTheRelease(t *testing.T) {
	var index struct {
		APIVersion string `json:"apiVersion"`
		Entries    map[string][]struct {
			Version string   `json:"version"`
			URLs    []string `json:"urls"`
			Digest  string   `json:"digest"`
		} `json:"entries"`
	}
	if err := yaml.Unmarshal(read(t, "index.yaml"), &index); err != nil {
		t.Fatal(err)
	}
	entries := index.Entries["evictionrequest"]
	if index.APIVersion != "v1" || len(entries) != 1 {
		t.Fatalf("index.yaml: %+v, want one entry of evictionrequest", index)
	}
	e := entries[0]
	url := release.DefaultDownloadURL + "/" + *version + "/" + chartArchive()
	if e.Version != strings.TrimPrefix(*version, "v") || len(e.URLs) != 1 || e.URLs[0] != url || e.Digest != sha(read(t, chartArchive())) {
		t.Errorf("index.yaml's entry %+v, want version %s at %s with the archive's digest", e, *version, url)
	}
}

// bom is what the test reads of a CycloneDX bill of materials.
type bom struct {
	BOMFormat   string `json:"bomFormat"`
	SpecVersion string `json:"specVersion"`
	Metadata    struct {
		Component struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"component"`
	} `json:"metadata"`
	Components []struct {
		Name    string `json:"name"`
		Version string `json:"version"`
		PURL    string `json:"purl"`
	} `json:"components"`
}

// Every binary of the release, the plugin's and the image's, has a
// CycloneDX bill of materials naming the release and the modules it is
// built from, with their versions.
func TestEveryBinaryHasABillOfMaterials(t *testing.T) {
	files, err := os.ReadDir(*dir)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range files {
		if !strings.HasSuffix(f.Name(), ".cdx.json") {
			continue
		}
		var b bom
		if err := json.Unmarshal(read(t, f.Name()), &b); err != nil {
			t.Fatalf("%s: %v", f.Name(), err)
		}
		binary, _, _ := strings.Cut(f.Name(), "_"+*version+"_")
		seen[binary] = true
		if b.BOMFormat != "CycloneDX" || b.SpecVersion == "" || b.Metadata.Component.Version != *version {
			t.Errorf("%s: format %q %q, component %+v; want CycloneDX of version %s", f.Name(), b.BOMFormat, b.SpecVersion, b.Metadata.Component, *version)
		}
		if !hasModule(b, "k8s.io/client-go", "v0.37.2") {
			t.Errorf("%s does not list k8s.io/client-go v0.37.2, which every binary is built with", f.Name())
		}
	}
	for _, binary := range []string{"kubectl-evictionrequest", "evictionrequest-apiserver", "evictionrequest-controller", "surge-interceptor"} {
		if !seen[binary] {
			t.Errorf("no bill of materials of %s", binary)
		}
	}
}

func hasModule(b bom, name, version string) bool {
	for _, c := range b.Components {
		if (c.Name == name || strings.Contains(c.PURL, name+"@")) && c.Version == version {
			return true
		}
	}
	return false
}
