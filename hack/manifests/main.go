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

// Command manifests renders the overlays of artifacts/overlays from the
// chart, and the chart's README table of values and values.schema.json
// from its values.yaml (make manifests), or, with --verify, fails when one
// differs from what it would render (make verify-manifests).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/evictionrequest/apiserver/internal/manifests"
)

func main() {
	helm := flag.String("helm", "_output/bin/helm", "The helm binary that renders the chart.")
	root := flag.String("root", ".", "The repository's root.")
	verify := flag.Bool("verify", false, "Render into memory and fail when an overlay's install.yaml differs from it, instead of writing.")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if !*verify {
		if err := manifests.Write(ctx, *helm, *root); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	stale, err := manifests.Verify(ctx, *helm, *root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if len(stale) > 0 {
		fmt.Fprintln(os.Stderr, "These rendered files differ from the chart; run make manifests:")
		for _, path := range stale {
			fmt.Fprintln(os.Stderr, "  "+path)
		}
		os.Exit(1)
	}
}
