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

// Package image opens the image `make image` built, as a user's runtime
// would: its index, its config, its layer, and the binary in it.
package image

import (
	"archive/tar"
	"errors"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

var (
	layoutDir = flag.String("layout", "../../_output/image", "OCI image layout `make image` wrote.")
	version   = flag.String("version", "", "Version the image must carry.")
	revision  = flag.String("revision", "", "Commit the image must carry.")
)

// binaries are the programs of the image; the first is its entrypoint.
var binaries = []string{"evictionrequest-apiserver", "evictionrequest-controller", "surge-interceptor"}

// hostImage is the image of the index for the machine the test runs on.
func hostImage(t *testing.T) v1.Image {
	t.Helper()
	index, err := layout.ImageIndexFromPath(*layoutDir)
	if err != nil {
		t.Fatalf("opening the OCI layout %s (make image writes it): %v", *layoutDir, err)
	}
	manifest, err := index.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range manifest.Manifests {
		if m.Platform != nil && m.Platform.OS == runtime.GOOS && m.Platform.Architecture == runtime.GOARCH {
			img, err := index.Image(m.Digest)
			if err != nil {
				t.Fatal(err)
			}
			return img
		}
	}
	t.Fatalf("no image for %s/%s in %+v", runtime.GOOS, runtime.GOARCH, manifest.Manifests)
	return nil
}

// The image runs as a non-root user, starts the server, and says what it
// is and where it comes from.
func TestImageConfig(t *testing.T) {
	cfg, err := hostImage(t).ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Config.User != "65532:65532" {
		t.Errorf("user %q, want the non-root 65532:65532", cfg.Config.User)
	}
	if want := "/" + binaries[0]; len(cfg.Config.Entrypoint) != 1 || cfg.Config.Entrypoint[0] != want {
		t.Errorf("entrypoint %v, want [%s]", cfg.Config.Entrypoint, want)
	}
	for label, want := range map[string]string{
		"org.opencontainers.image.version":  *version,
		"org.opencontainers.image.revision": *revision,
		"org.opencontainers.image.source":   "https://github.com/evictionrequest/apiserver",
	} {
		if got := cfg.Config.Labels[label]; got == "" || (want != "" && got != want) {
			t.Errorf("label %s = %q, want %q", label, got, want)
		}
	}
}

// The image's one layer holds the static binaries, executable, and the
// server taken out of it runs and prints the version it was built as.
func TestImageHoldsTheBinaries(t *testing.T) {
	layers, err := hostImage(t).Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers %v, %v; want one", layers, err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rc.Close() }()
	dir := t.TempDir()
	found := map[string]bool{}
	r := tar.NewReader(rc)
	for {
		h, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Mode&0o111 == 0 {
			t.Errorf("%s is not executable: mode %o", h.Name, h.Mode)
		}
		found[h.Name] = true
		f, err := os.OpenFile(filepath.Join(dir, filepath.Base(h.Name)), os.O_CREATE|os.O_WRONLY, 0o755)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(f, r); err != nil {
			t.Fatal(err)
		}
		_ = f.Close()
	}
	for _, name := range binaries {
		if !found[name] {
			t.Errorf("the layer lacks %s: %v", name, found)
		}
	}
	out, err := exec.Command(filepath.Join(dir, binaries[0]), "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --version: %v\n%s", binaries[0], err, out)
	}
	if *version != "" && !strings.Contains(string(out), *version) {
		t.Errorf("%s --version printed %q, want the version %s", binaries[0], out, *version)
	}
}
