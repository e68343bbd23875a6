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

// Package artifacts holds the kustomize overlays that deploy the product,
// one per scenario of the chart (make manifests renders each overlay's
// install.yaml from charts/evictionrequest), with the components that add
// certificates from files, and renders them, so that the local control
// plane and the e2e suites use exactly what users deploy.
package artifacts

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// manifests holds the kustomizations and the rendered installs;
// certificates and keys are never embedded (only *.yaml files are).
//
//go:embed components/*/*.yaml overlays/*/*.yaml examples/*/kustomization.yaml
var manifests embed.FS

// Overlays are the overlays users deploy, in artifacts/overlays: one per
// scenario of the chart (its ci/<overlay>-values.yaml), sorted.
var Overlays = func() []string {
	entries, err := manifests.ReadDir("overlays")
	if err != nil {
		panic(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}()

// MovesNamespace is false for the overlays that cannot move to another
// namespace through examples/namespace: the eviction API bridge's webhook
// exempts the components by their service account's name in a CEL
// expression, which kustomize cannot rewrite. Render the chart with
// --namespace instead.
func MovesNamespace(overlay string) bool {
	return !strings.HasSuffix(overlay, "bridge")
}

// MonitoringOverlay is the overlay with monitoring for the Prometheus
// Operator.
const MonitoringOverlay = "monitoring"

// Render builds overlay with kustomize, as `kubectl kustomize` does, and
// returns its objects. certs are the certificate files the overlays read
// (CertFiles), keyed by path relative to artifacts/; an overlay fails to
// render without those it reads.
func Render(overlay string, certs map[string][]byte) ([]*unstructured.Unstructured, error) {
	return RenderWith(overlay, Install{}, certs)
}

// InstallYAML is the install.yaml of overlay, as make manifests rendered it
// from the chart.
func InstallYAML(overlay string) ([]byte, error) {
	return manifests.ReadFile(path.Join("overlays", overlay, "install.yaml"))
}

// Install is what a user's kustomization adds to an overlay.
type Install struct {
	// Namespace, when set, installs into it, as the kustomization of
	// artifacts/examples/namespace does.
	Namespace string
}

// namespaceExample is the kustomization that installs an overlay in
// another namespace.
const namespaceExample = "examples/namespace/kustomization.yaml"

// RenderWith renders overlay as a user's kustomization that names the
// overlay and adds what install says renders it.
func RenderWith(overlay string, install Install, certs map[string][]byte) ([]*unstructured.Unstructured, error) {
	fSys := filesys.MakeFsInMemory()
	err := fs.WalkDir(manifests, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := manifests.ReadFile(name)
		if err != nil {
			return err
		}
		return fSys.WriteFile(path.Join("/artifacts", name), data)
	})
	if err != nil {
		return nil, err
	}
	for name, data := range certs {
		if err := fSys.WriteFile(path.Join("/artifacts", name), data); err != nil {
			return nil, err
		}
	}
	dir := path.Join("/artifacts/overlays", overlay)
	if install.Namespace != "" {
		kustomization, err := userKustomization(overlay, install)
		if err != nil {
			return nil, err
		}
		dir = "/artifacts/examples/rendered"
		if err := fSys.WriteFile(path.Join(dir, "kustomization.yaml"), kustomization); err != nil {
			return nil, err
		}
	}
	resources, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fSys, dir)
	if err != nil {
		return nil, fmt.Errorf("rendering overlay %s: %w", overlay, err)
	}
	data, err := resources.AsYaml()
	if err != nil {
		return nil, err
	}
	objects, err := Decode(data)
	if err != nil {
		return nil, fmt.Errorf("overlay %s: %w", overlay, err)
	}
	return objects, nil
}

// userKustomization is the kustomization, in a directory beside
// examples/namespace, that renders overlay in install's namespace: the
// namespace example's, with its namespace and overlay.
func userKustomization(overlay string, install Install) ([]byte, error) {
	example, err := manifests.ReadFile(namespaceExample)
	if err != nil {
		return nil, err
	}
	kustomization := strings.Replace(string(example), "- ../../overlays/default\n", "- ../../overlays/"+overlay+"\n", 1)
	kustomization = strings.Replace(kustomization, "namespace: team-evictions\n", "namespace: "+install.Namespace+"\n", 1)
	return []byte(kustomization), nil
}

// Encode writes objects as a stream of YAML documents, as `kubectl
// kustomize` prints them: what Decode reads back.
func Encode(objects []*unstructured.Unstructured) ([]byte, error) {
	var doc bytes.Buffer
	for _, obj := range objects {
		data, err := yaml.Marshal(obj.Object)
		if err != nil {
			return nil, err
		}
		doc.WriteString("---\n")
		doc.Write(data)
	}
	return doc.Bytes(), nil
}

// Decode reads the objects of a stream of YAML or JSON documents.
func Decode(data []byte) ([]*unstructured.Unstructured, error) {
	var objects []*unstructured.Unstructured
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := decoder.Decode(&obj.Object); errors.Is(err, io.EOF) {
			return objects, nil
		} else if err != nil {
			return nil, err
		}
		if len(obj.Object) > 0 {
			objects = append(objects, obj)
		}
	}
}
