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

// Package release cuts a release of the project: Pin pins the image of a
// version in the chart, from which make manifests renders every overlay;
// Package writes the release's files. hack/release runs them for `make
// release`.
package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/evictionrequest/apiserver/artifacts"
)

// Overlays are the overlays whose install a release ships: those that need
// no certificate made on the user's machine (the others read theirs from
// files, make certs).
var Overlays = []string{"cert-manager", "dev", "lifecycle", "lifecycle-actors-only"}

var semver = regexp.MustCompile(`^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`)

// Options are the inputs of Package.
type Options struct {
	// Version is the release, vX.Y.Z.
	Version string
	// Out is the directory of the release's files; replaced.
	Out string
	// PluginBinDir holds the plugin of each platform in <os>_<arch>/.
	PluginBinDir string
	// ImageTarball is the image tarball to ship; empty ships none.
	ImageTarball string
	// Changelog has a section "## <version>", the release notes.
	Changelog string
	// License is shipped in every archive.
	License string
	// DownloadURL is where the release's files are downloaded from; the
	// krew manifest and the chart repository's index point there.
	DownloadURL string
	// ChartDir is the chart, packaged with Helm, the helm binary; none
	// when empty.
	ChartDir, Helm string
	// ImageBinDir holds the binaries of the image of each platform in
	// <os>_<arch>/; CycloneDX is the cyclonedx-gomod binary, which writes
	// the bills of materials of the image's and the plugin's binaries;
	// none when empty.
	ImageBinDir, CycloneDX string
}

// DefaultDownloadURL is where the project's releases are published.
const DefaultDownloadURL = "https://github.com/evictionrequest/apiserver/releases/download"

// Package writes the release's files into o.Out: the plugin of each
// platform as a tar.gz with the license, a krew manifest, one install YAML
// per overlay that needs no local certificate, the image tarball, the chart
// with its repository index, a bill of materials of every binary, the
// release notes, and checksums.txt.
func Package(opts Options) error {
	o := opts
	if !semver.MatchString(o.Version) {
		return fmt.Errorf("--version %q is not vX.Y.Z", o.Version)
	}
	if err := os.RemoveAll(o.Out); err != nil {
		return err
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return err
	}
	notes, err := releaseNotes(o.Changelog, o.Version)
	if err != nil {
		return err
	}
	steps := []func(Options) error{
		func(o Options) error { return os.WriteFile(filepath.Join(o.Out, "RELEASE_NOTES.md"), notes, 0o644) },
		packPlugins, writeInstalls, copyImage, packChart, writeSBOMs,
	}
	for _, step := range steps {
		if err := step(o); err != nil {
			return err
		}
	}
	return writeChecksums(o.Out)
}

// releaseNotes is the section of the changelog for version.
func releaseNotes(changelog, version string) ([]byte, error) {
	data, err := os.ReadFile(changelog)
	if err != nil {
		return nil, err
	}
	var section []string
	in := false
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "## ") {
			if in {
				break
			}
			in = strings.TrimSpace(strings.TrimPrefix(line, "## ")) == version
		}
		if in {
			section = append(section, line)
		}
	}
	if len(section) == 0 {
		return nil, fmt.Errorf("%s has no section \"## %s\": write the release's changes there first", changelog, version)
	}
	return []byte(strings.TrimSpace(strings.Join(section, "\n")) + "\n"), nil
}

// packPlugins archives the plugin of every platform with the license and
// writes the krew manifest that installs them.
func packPlugins(o Options) error {
	platforms, err := os.ReadDir(o.PluginBinDir)
	if err != nil {
		return err
	}
	license, err := os.ReadFile(o.License)
	if err != nil {
		return err
	}
	var entries []krewPlatform
	for _, p := range platforms {
		osName, arch, ok := strings.Cut(p.Name(), "_")
		if !p.IsDir() || !ok {
			continue
		}
		binary, err := os.ReadFile(filepath.Join(o.PluginBinDir, p.Name(), "kubectl-evictionrequest"))
		if err != nil {
			return err
		}
		archive := fmt.Sprintf("kubectl-evictionrequest_%s_%s_%s.tar.gz", o.Version, osName, arch)
		data, err := tarGz(map[string][]byte{"kubectl-evictionrequest": binary, "LICENSE": license})
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(o.Out, archive), data, 0o644); err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		entries = append(entries, krewPlatform{os: osName, arch: arch, uri: o.DownloadURL + "/" + o.Version + "/" + archive, sha256: hex.EncodeToString(sum[:])})
	}
	if len(entries) == 0 {
		return fmt.Errorf("no plugin binary in %s", o.PluginBinDir)
	}
	return os.WriteFile(filepath.Join(o.Out, "evictionrequest.yaml"), krewManifest(o.Version, entries), 0o644)
}

// tarGz archives files (by name), executable, with a fixed time, in name
// order: one input, one archive.
func tarGz(files map[string][]byte) ([]byte, error) {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		header := &tar.Header{Name: name, Mode: 0o755, Size: int64(len(files[name])), ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(header); err != nil {
			return nil, err
		}
		if _, err := tw.Write(files[name]); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeInstalls writes install-<overlay>.yaml of the overlays that need no
// local certificate: each overlay's install.yaml, which make manifests
// rendered from the chart Pin pinned.
func writeInstalls(o Options) error {
	for _, overlay := range Overlays {
		doc, err := artifacts.InstallYAML(overlay)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(o.Out, "install-"+overlay+".yaml"), doc, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// copyImage ships the image tarball.
func copyImage(o Options) error {
	if o.ImageTarball == "" {
		return nil
	}
	data, err := os.ReadFile(o.ImageTarball)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(o.Out, "evictionrequest-apiserver_"+o.Version+"_image.tar"), data, 0o644)
}

// writeChecksums writes checksums.txt: the SHA-256 of every file, as
// sha256sum prints them.
func writeChecksums(dir string) error {
	files, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var lines []string
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(dir, f.Name()))
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		lines = append(lines, hex.EncodeToString(sum[:])+"  "+f.Name())
	}
	return os.WriteFile(filepath.Join(dir, "checksums.txt"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}
