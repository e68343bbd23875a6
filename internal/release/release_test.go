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
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"

	"github.com/evictionrequest/apiserver/artifacts"
)

// fakeRelease is the input of a release: a plugin "binary" per platform, a
// changelog with the version's section, a license, an image tarball.
func fakeRelease(t *testing.T) Options {
	t.Helper()
	dir := t.TempDir()
	for _, platform := range []string{"linux_amd64", "darwin_arm64"} {
		write(t, filepath.Join(dir, "bin", platform, "kubectl-evictionrequest"), "plugin for "+platform)
	}
	write(t, filepath.Join(dir, "CHANGELOG.md"), "# Changelog\n\n## v1.2.3\n\n- Drains as safely as kubectl drain.\n\n## v1.2.2\n\n- Older.\n")
	write(t, filepath.Join(dir, "LICENSE"), "Apache License")
	write(t, filepath.Join(dir, "image.tar"), "image")
	return Options{Version: "v1.2.3", Out: filepath.Join(dir, "release"), PluginBinDir: filepath.Join(dir, "bin"),
		ImageTarball: filepath.Join(dir, "image.tar"), Changelog: filepath.Join(dir, "CHANGELOG.md"),
		License: filepath.Join(dir, "LICENSE"), DownloadURL: "https://example.com/releases"}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// A release holds the plugin of every platform with its license, a krew
// manifest whose checksums match them, the install YAMLs with the image
// pinned, the image, the notes of the version, and checksums of it all.
func TestPackage(t *testing.T) {
	o := fakeRelease(t)
	if err := Package(o); err != nil {
		t.Fatal(err)
	}
	notes := string(read(t, filepath.Join(o.Out, "RELEASE_NOTES.md")))
	if !strings.Contains(notes, "Drains as safely") || strings.Contains(notes, "Older") {
		t.Errorf("release notes:\n%s", notes)
	}
	krew := string(read(t, filepath.Join(o.Out, "evictionrequest.yaml")))
	for _, platform := range []string{"linux_amd64", "darwin_arm64"} {
		archive := "kubectl-evictionrequest_v1.2.3_" + platform + ".tar.gz"
		data := read(t, filepath.Join(o.Out, archive))
		sum := sha256.Sum256(data)
		if !strings.Contains(krew, "uri: https://example.com/releases/v1.2.3/"+archive+"\n    sha256: "+hex.EncodeToString(sum[:])) {
			t.Errorf("the krew manifest lacks %s with its checksum:\n%s", archive, krew)
		}
		files := untar(t, data)
		if files["kubectl-evictionrequest"] != "plugin for "+platform || files["LICENSE"] != "Apache License" {
			t.Errorf("%s holds %v", archive, files)
		}
	}
	want, err := artifacts.ReleaseImage()
	if err != nil {
		t.Fatal(err)
	}
	for _, overlay := range Overlays {
		for _, doc := range strings.Split(string(read(t, filepath.Join(o.Out, "install-"+overlay+".yaml"))), "---\n") {
			var d appsv1.Deployment
			if err := yaml.Unmarshal([]byte(doc), &d); err != nil {
				t.Fatalf("install-%s.yaml: %v", overlay, err)
			}
			if d.Kind == "Deployment" && d.Spec.Template.Spec.Containers[0].Image != want {
				t.Errorf("install-%s.yaml: Deployment %s runs %s, want %s", overlay, d.Name, d.Spec.Template.Spec.Containers[0].Image, want)
			}
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(string(read(t, filepath.Join(o.Out, "checksums.txt")))), "\n") {
		sum, name, _ := strings.Cut(line, "  ")
		got := sha256.Sum256(read(t, filepath.Join(o.Out, name)))
		if hex.EncodeToString(got[:]) != sum {
			t.Errorf("checksums.txt is wrong for %s", name)
		}
	}
}

func TestPackageNeedsTheVersionInTheChangelog(t *testing.T) {
	o := fakeRelease(t)
	o.Version = "v9.9.9"
	if err := Package(o); err == nil || !strings.Contains(err.Error(), `has no section "## v9.9.9"`) {
		t.Errorf("Package() = %v, want the missing changelog section named", err)
	}
}

// Pin pins repository and tag together: the chart's version and
// appVersion, and values.yaml's image.repository, no other repository.
func TestPinRewritesTheChartsImage(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "Chart.yaml"), "name: evictionrequest\nversion: 0.1.0\n# The release.\nappVersion: \"0.1.0\"\n")
	values := "image:\n  # -- Image repository.\n  repository: ghcr.io/evictionrequest/evictionrequest-apiserver\n  tag: \"\"\n" +
		"etcd:\n  image:\n    repository: gcr.io/etcd-development/etcd\n"
	write(t, filepath.Join(dir, "values.yaml"), values)
	if err := Pin(dir, "registry.example.com/team/evictionrequest-apiserver", "v1.2.3"); err != nil {
		t.Fatal(err)
	}
	if got := string(read(t, filepath.Join(dir, "Chart.yaml"))); got != "name: evictionrequest\nversion: 1.2.3\n# The release.\nappVersion: \"1.2.3\"\n" {
		t.Errorf("Chart.yaml after Pin:\n%s", got)
	}
	want := strings.Replace(values, "ghcr.io/evictionrequest/evictionrequest-apiserver", "registry.example.com/team/evictionrequest-apiserver", 1)
	if got := string(read(t, filepath.Join(dir, "values.yaml"))); got != want {
		t.Errorf("values.yaml after Pin:\n%s\nwant:\n%s", got, want)
	}
	if err := Pin(dir, "r", "1.2"); err == nil {
		t.Error("Pin accepted a version that is not vX.Y.Z")
	}
	write(t, filepath.Join(dir, "values.yaml"), "replicas: 1\n")
	if err := Pin(dir, "r", "v1.2.3"); err == nil || !strings.Contains(err.Error(), "no image.repository") {
		t.Errorf("Pin of values without image.repository = %v, want it said", err)
	}
}

func untar(t *testing.T, data []byte) map[string]string {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	r := tar.NewReader(gz)
	for {
		h, err := r.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		content, _ := io.ReadAll(r)
		files[h.Name] = string(content)
	}
}
