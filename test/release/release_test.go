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

// Package release opens what `make release` wrote, as a user downloading
// the release would: the checksums, the krew manifest and the archives it
// points at, the plugin running --version, the install YAMLs with the
// pinned image, the image tarball and the release notes.
package release

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/evictionrequest/apiserver/artifacts"
	"github.com/evictionrequest/apiserver/internal/release"
)

var (
	dir     = flag.String("dir", "../../_output/release-test", "Directory make release wrote.")
	version = flag.String("version", "", "Version of the release.")
	helm    = flag.String("helm", "../../_output/bin/helm", "The helm binary, which renders the release's chart.")
)

func read(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(*dir, name))
	if err != nil {
		t.Fatalf("%v (make test-release writes the release)", err)
	}
	return data
}

func sha(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// checksums.txt names every other file with its SHA-256, as sha256sum -c
// reads it.
func TestChecksumsCoverEveryFile(t *testing.T) {
	listed := map[string]bool{}
	scanner := bufio.NewScanner(strings.NewReader(string(read(t, "checksums.txt"))))
	for scanner.Scan() {
		sum, name, ok := strings.Cut(scanner.Text(), "  ")
		if !ok {
			t.Fatalf("checksums.txt line %q is not <sha256>  <file>", scanner.Text())
		}
		if got := sha(read(t, name)); got != sum {
			t.Errorf("%s: sha256 %s, checksums.txt says %s", name, got, sum)
		}
		listed[name] = true
	}
	files, err := os.ReadDir(*dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.Name() != "checksums.txt" && !listed[f.Name()] {
			t.Errorf("checksums.txt lacks %s", f.Name())
		}
	}
}

// krewPlugin is what the test reads of the krew manifest.
type krewPlugin struct {
	Kind string `json:"kind"`
	Spec struct {
		Version   string `json:"version"`
		Platforms []struct {
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
			URI    string `json:"uri"`
			SHA256 string `json:"sha256"`
			Bin    string `json:"bin"`
		} `json:"platforms"`
	} `json:"spec"`
}

// The krew manifest installs this version from the release's archives,
// and the plugin in the archive of this machine's platform runs.
func TestKrewManifestInstallsThePlugin(t *testing.T) {
	var plugin krewPlugin
	if err := yaml.Unmarshal(read(t, "evictionrequest.yaml"), &plugin); err != nil {
		t.Fatal(err)
	}
	if plugin.Kind != "Plugin" || plugin.Spec.Version != *version || len(plugin.Spec.Platforms) == 0 {
		t.Fatalf("krew manifest: kind %q, version %q, %d platforms; want a Plugin of %s", plugin.Kind, plugin.Spec.Version, len(plugin.Spec.Platforms), *version)
	}
	ran := false
	for _, p := range plugin.Spec.Platforms {
		archive := filepath.Base(p.URI)
		if want := release.DefaultDownloadURL + "/" + *version + "/" + archive; p.URI != want {
			t.Errorf("uri %s, want %s", p.URI, want)
		}
		data := read(t, archive)
		if sha(data) != p.SHA256 {
			t.Errorf("%s: sha256 %s, the manifest says %s", archive, sha(data), p.SHA256)
		}
		files := untarGz(t, data)
		if _, ok := files["LICENSE"]; !ok {
			t.Errorf("%s lacks LICENSE", archive)
		}
		if p.Selector.MatchLabels["os"] == runtime.GOOS && p.Selector.MatchLabels["arch"] == runtime.GOARCH {
			runPlugin(t, files[p.Bin])
			ran = true
		}
	}
	if !ran {
		t.Errorf("no archive for %s/%s to run", runtime.GOOS, runtime.GOARCH)
	}
}

func untarGz(t *testing.T, data []byte) map[string][]byte {
	t.Helper()
	gz, err := gzip.NewReader(strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		if files[h.Name], err = io.ReadAll(tr); err != nil {
			t.Fatal(err)
		}
	}
}

// runPlugin runs the plugin binary with --version: it is this release's.
func runPlugin(t *testing.T, binary []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubectl-evictionrequest")
	if err := os.WriteFile(path, binary, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), path, "--version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), *version) {
		t.Errorf("kubectl-evictionrequest --version: %v, %q; want %s", err, out, *version)
	}
}

// Every install YAML runs the image the release pins, and the image
// tarball holds that image.
func TestInstallYAMLsRunTheReleaseImage(t *testing.T) {
	image, err := artifacts.ReleaseImage()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(image, ":"+*version) {
		t.Fatalf("the chart pins %s, not version %s", image, *version)
	}
	for _, overlay := range release.Overlays {
		objects, err := artifacts.Decode(read(t, "install-"+overlay+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		deployments := 0
		for _, obj := range objects {
			if obj.GetKind() != "Deployment" {
				continue
			}
			deployments++
			containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
			for _, c := range containers {
				if got := c.(map[string]interface{})["image"]; got != image {
					t.Errorf("install-%s.yaml: Deployment %s runs %v, want %s", overlay, obj.GetName(), got, image)
				}
			}
		}
		if deployments == 0 {
			t.Errorf("install-%s.yaml has no Deployment", overlay)
		}
	}
	path := filepath.Join(*dir, "evictionrequest-apiserver_"+*version+"_image.tar")
	manifest, err := tarball.LoadManifest(func() (io.ReadCloser, error) { return os.Open(path) })
	if err != nil {
		t.Fatal(err)
	}
	if len(manifest) != 1 || len(manifest[0].RepoTags) != 1 || manifest[0].RepoTags[0] != image {
		t.Errorf("the image tarball is tagged %+v, want %s", manifest, image)
	}
	img, err := tarball.ImageFromPath(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Config.Labels["org.opencontainers.image.version"]; got != *version {
		t.Errorf("the image's version label %q, want %s", got, *version)
	}
}

// The release notes are the version's section of CHANGELOG.md.
func TestReleaseNotesAreTheChangelogSection(t *testing.T) {
	notes := string(read(t, "RELEASE_NOTES.md"))
	if !strings.HasPrefix(notes, "## "+*version+"\n") {
		t.Errorf("RELEASE_NOTES.md starts %q, want the section ## %s", strings.SplitN(notes, "\n", 2)[0], *version)
	}
	changelog, err := os.ReadFile("../../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(changelog), strings.TrimSpace(notes)) {
		t.Error("RELEASE_NOTES.md is not a section of CHANGELOG.md")
	}
}
