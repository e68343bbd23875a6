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

// Command image builds the project's container image without a container
// engine, with go-containerregistry: one layer of the static binaries of
// every platform on an empty base (they need no libc, no shell, no CA
// bundle: the clients trust the cluster's CA from their kubeconfig or
// ServiceAccount), the non-root user 65532, and OCI labels. Every input
// is fixed by the commit (file times and the created time are the
// commit's), so one commit gives one digest. It writes an OCI image
// layout and a tarball, and with --push sends the image to a registry with
// the credentials of ~/.docker/config.json. `make image` and `make push`
// run it.
package main

import (
	"archive/tar"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"k8s.io/klog/v2"
)

// User is the user and group the image runs as: distroless's nonroot.
const User = "65532:65532"

type options struct {
	binDir, binaries, platforms string
	version, revision, source   string
	created, tag                string
	layoutDir, tarballPath      string
	push                        string
}

func main() {
	var o options
	flag.StringVar(&o.binDir, "bin-dir", "_output/image-bin", "Directory of the static binaries, one subdirectory per platform (linux_amd64, ...).")
	flag.StringVar(&o.binaries, "binaries", "evictionrequest-apiserver,evictionrequest-controller,surge-interceptor", "Binaries of the image, comma-separated; the first is the entrypoint.")
	flag.StringVar(&o.platforms, "platforms", "linux/amd64", "Platforms of the image, comma-separated.")
	flag.StringVar(&o.version, "version", "", "Version of the image (org.opencontainers.image.version).")
	flag.StringVar(&o.revision, "revision", "", "Commit the image is built from (org.opencontainers.image.revision).")
	flag.StringVar(&o.source, "source", "https://github.com/evictionrequest/apiserver", "Source repository (org.opencontainers.image.source).")
	flag.StringVar(&o.created, "created", "", "Creation time, RFC 3339: the commit's, so that one commit gives one digest.")
	flag.StringVar(&o.tag, "tag", "evictionrequest-apiserver:dev", "Reference the tarball is tagged with.")
	flag.StringVar(&o.layoutDir, "layout", "_output/image", "Directory of the OCI image layout to write; replaced.")
	flag.StringVar(&o.tarballPath, "tarball", "_output/image.tar", "Tarball of the image for the platform of the first, to write (docker load, kind load image-archive).")
	flag.StringVar(&o.push, "push", "", "Reference to push the image to, such as registry.example.com/evictionrequest-apiserver:v0.1.0; empty pushes nothing.")
	klog.InitFlags(nil)
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		klog.Background().Error(err, "Building the image failed")
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	created, err := time.Parse(time.RFC3339, o.created)
	if err != nil {
		return fmt.Errorf("--created: %w", err)
	}
	binaries := strings.Split(o.binaries, ",")
	var images []v1.Image
	var platforms []v1.Platform
	for _, p := range strings.Split(o.platforms, ",") {
		platform, err := v1.ParsePlatform(p)
		if err != nil {
			return fmt.Errorf("--platforms: %w", err)
		}
		img, err := build(o, *platform, binaries, created)
		if err != nil {
			return fmt.Errorf("the image for %s: %w", p, err)
		}
		images = append(images, img)
		platforms = append(platforms, *platform)
	}
	index := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for i, img := range images {
		index = mutate.AppendManifests(index, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &platforms[i]}})
	}
	if err := writeLayout(o.layoutDir, index); err != nil {
		return err
	}
	tag, err := name.NewTag(o.tag)
	if err != nil {
		return fmt.Errorf("--tag: %w", err)
	}
	if err := tarball.WriteToFile(o.tarballPath, tag, images[0]); err != nil {
		return err
	}
	digest, err := index.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("image %s (%s): OCI layout %s, tarball %s (%s)\n", o.tag, digest, o.layoutDir, o.tarballPath, platforms[0])
	if o.push == "" {
		return nil
	}
	ref, err := name.ParseReference(o.push)
	if err != nil {
		return fmt.Errorf("--push: %w", err)
	}
	if err := remote.WriteIndex(ref, index, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return fmt.Errorf("pushing %s: %w", ref, err)
	}
	fmt.Printf("pushed %s@%s\n", ref, digest)
	return nil
}

// build is the image of one platform: the binaries of bin-dir/<os>_<arch>
// in one layer, run as User, with OCI labels.
func build(o options, platform v1.Platform, binaries []string, created time.Time) (v1.Image, error) {
	dir := filepath.Join(o.binDir, platform.OS+"_"+platform.Architecture)
	layer, err := binaryLayer(dir, binaries, created)
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), layer)
	if err != nil {
		return nil, err
	}
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture, cfg.Variant = platform.OS, platform.Architecture, platform.Variant
	cfg.Created = v1.Time{Time: created}
	cfg.Config.User = User
	cfg.Config.Entrypoint = []string{"/" + binaries[0]}
	cfg.Config.Labels = map[string]string{
		"org.opencontainers.image.title":    "evictionrequest-apiserver",
		"org.opencontainers.image.version":  o.version,
		"org.opencontainers.image.revision": o.revision,
		"org.opencontainers.image.source":   o.source,
		"org.opencontainers.image.created":  created.UTC().Format(time.RFC3339),
		"org.opencontainers.image.licenses": "Apache-2.0",
	}
	return mutate.ConfigFile(img, cfg)
}

// binaryLayer is one layer of the binaries at the root, executable, owned
// by root, with the time of the commit.
func binaryLayer(dir string, binaries []string, created time.Time) (v1.Layer, error) {
	var buf bytes.Buffer
	w := tar.NewWriter(&buf)
	for _, name := range binaries {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		if err := w.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(data)), ModTime: created, Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
			return nil, err
		}
		if _, err := w.Write(data); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	content := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(content)), nil },
		tarball.WithMediaType(types.OCILayer))
}

// writeLayout replaces dir with an OCI image layout holding index.
func writeLayout(dir string, index v1.ImageIndex) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	_, err := layout.Write(dir, index)
	return err
}
