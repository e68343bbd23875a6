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

// Command release cuts a release of the project: `release pin` pins the
// image of a version, repository and tag, in the chart (make manifests then
// renders the overlays from it), `release package` writes the release's
// files. `make release VERSION=vX.Y.Z` runs them.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/evictionrequest/apiserver/internal/release"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: release pin|package [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "pin":
		fs := flag.NewFlagSet("pin", flag.ExitOnError)
		version := fs.String("version", "", "Version to release, vX.Y.Z.")
		repository := fs.String("repository", "", "Repository of the image, such as ghcr.io/evictionrequest/evictionrequest-apiserver.")
		chart := fs.String("chart", release.ChartDir, "The chart whose image repository (values.yaml), version and appVersion (Chart.yaml) become the release's.")
		_ = fs.Parse(os.Args[2:])
		err = release.Pin(*chart, *repository, *version)
	case "package":
		var o release.Options
		fs := flag.NewFlagSet("package", flag.ExitOnError)
		fs.StringVar(&o.Version, "version", "", "Version to release, vX.Y.Z.")
		fs.StringVar(&o.Out, "out", "_output/release", "Directory of the release's files; replaced.")
		fs.StringVar(&o.PluginBinDir, "plugin-bin-dir", "_output/release-bin", "Directory of the plugin binaries, one subdirectory per platform (linux_amd64, ...).")
		fs.StringVar(&o.ImageTarball, "image-tarball", "_output/image.tar", "Image tarball to ship; empty ships none.")
		fs.StringVar(&o.Changelog, "changelog", "CHANGELOG.md", "Changelog with a section \"## <version>\".")
		fs.StringVar(&o.License, "license", "LICENSE", "License shipped in every archive.")
		fs.StringVar(&o.DownloadURL, "download-url", release.DefaultDownloadURL, "Where the release's files are downloaded from; the krew manifest and the chart repository's index point there.")
		fs.StringVar(&o.ChartDir, "chart", release.ChartDir, "The chart to package; empty packages none.")
		fs.StringVar(&o.Helm, "helm", "_output/bin/helm", "The helm binary that packages the chart.")
		fs.StringVar(&o.ImageBinDir, "image-bin-dir", "_output/image-bin", "Directory of the image's binaries, one subdirectory per platform (linux_amd64, ...).")
		fs.StringVar(&o.CycloneDX, "cyclonedx", "_output/bin/cyclonedx-gomod", "The cyclonedx-gomod binary that writes the bills of materials; empty writes none.")
		_ = fs.Parse(os.Args[2:])
		err = release.Package(o)
	default:
		err = fmt.Errorf("unknown command %q: want pin or package", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}
