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

package chart

import (
	"fmt"
	"regexp"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/evictionrequest/apiserver/artifacts"
)

// scenarios pair each values file of the chart's ci/ with the overlay, and
// the components added to it, that install the same.
var scenarios = []struct {
	values, overlay string
	components      []string
}{
	{"default", "default", nil},
	{"ha", "ha", nil},
	{"cert-manager", "cert-manager", nil},
	{"dev", "dev", nil},
	{"lifecycle", "lifecycle", nil},
	{"bridge", "default", []string{"eviction-bridge", "eviction-bridge-authentication"}},
	{"lifecycle-bridge", "lifecycle", []string{"eviction-bridge-lifecycle", "eviction-bridge-authentication"}},
	{"lifecycle-actors-only", "lifecycle", []string{"lifecycle-actors-only"}},
	{"monitoring", "default", []string{artifacts.MonitoringComponent}},
	// The release component comes last: it pins the image of the
	// Deployments of the components before it, as every overlay's does.
	{"both", "default", []string{"lifecycle-controller", "release"}},
}

// The chart and the overlays install the same objects: for each scenario,
// the same kinds and names, and the same specs (images, arguments, RBAC
// rules, webhooks...), labels and annotations of the overlay's included.
// Only the Secrets kustomize generates from the certificate files are the
// user's to create for the chart, and the chart may add labels of its own.
func TestTheChartInstallsWhatTheOverlaysInstall(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.values, func(t *testing.T) {
			want, err := overlayObjects(sc.overlay, sc.components)
			if err != nil {
				t.Fatal(err)
			}
			objects, err := helmTemplate(t, "--values="+ciValues(sc.values))
			if err != nil {
				t.Fatal(err)
			}
			got := byKey(objects)
			for key, w := range want {
				g, ok := got[key]
				if !ok {
					t.Errorf("the chart lacks %s", key)
					continue
				}
				if diff := cmp.Diff(comparable(w, nil), comparable(g, w)); diff != "" {
					t.Errorf("%s differs from the overlay's (-overlay +chart):\n%s", key, diff)
				}
			}
			for key := range got {
				if _, ok := want[key]; !ok {
					t.Errorf("the chart adds %s, which the overlay does not install", key)
				}
			}
		})
	}
}

// generatedName is the hash kustomize appends to the names of the Secrets
// and ConfigMaps it generates, and to their references.
var generatedName = regexp.MustCompile(`(evictionrequest-[a-z-]+-(?:tls|ca))-[a-z0-9]{10}\b`)

// overlayObjects renders overlay with components, as a user's kustomization
// does, with placeholder certificate files, the generated Secrets left out
// and their hashed names restored.
func overlayObjects(overlay string, components []string) (map[string]*unstructured.Unstructured, error) {
	placeholders := map[string][]byte{}
	for _, name := range artifacts.CertFiles {
		placeholders[name] = []byte("placeholder " + name)
	}
	objects, err := artifacts.RenderWith(overlay, artifacts.Install{Components: components}, placeholders)
	if err != nil {
		return nil, err
	}
	data, err := artifacts.Encode(objects)
	if err != nil {
		return nil, err
	}
	objects, err = artifacts.Decode(generatedName.ReplaceAll(data, []byte("$1")))
	if err != nil {
		return nil, err
	}
	var kept []*unstructured.Unstructured
	for _, obj := range objects {
		if obj.GetKind() == "Secret" {
			continue
		}
		kept = append(kept, obj)
	}
	return byKey(kept), nil
}

// byKey indexes objects by kind, namespace and name.
func byKey(objects []*unstructured.Unstructured) map[string]*unstructured.Unstructured {
	m := map[string]*unstructured.Unstructured{}
	for _, obj := range objects {
		m[fmt.Sprintf("%s %s/%s", obj.GetKind(), obj.GetNamespace(), obj.GetName())] = obj
	}
	return m
}

// comparable is what the test compares of obj: everything but its labels
// and annotations, of which only those of overlay (when given) count: the
// chart's own may be added; and an imagePullPolicy of IfNotPresent, which
// is the default of the chart's tags, is as good as none.
func comparable(obj, overlay *unstructured.Unstructured) map[string]any {
	c := obj.DeepCopy().Object
	dropDefaultPullPolicy(c)
	meta, _ := c["metadata"].(map[string]any)
	delete(meta, "labels")
	delete(meta, "annotations")
	from := obj
	if overlay != nil {
		from = overlay
	}
	meta["labels"] = pick(obj.GetLabels(), from.GetLabels())
	meta["annotations"] = pick(obj.GetAnnotations(), from.GetAnnotations())
	// The same of a workload's pod template.
	for _, field := range []string{"labels", "annotations"} {
		have, _, _ := unstructured.NestedStringMap(obj.Object, "spec", "template", "metadata", field)
		keys, _, _ := unstructured.NestedStringMap(from.Object, "spec", "template", "metadata", field)
		if have == nil && keys == nil {
			continue
		}
		picked := map[string]any{}
		for k, v := range pick(have, keys) {
			picked[k] = v
		}
		_ = unstructured.SetNestedMap(c, picked, "spec", "template", "metadata", field)
	}
	return c
}

// pick is m restricted to the keys of keys, sorted into a map.
func pick(m, keys map[string]string) map[string]string {
	out := map[string]string{}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if v, ok := m[k]; ok {
			out[k] = v
		} else {
			out[k] = "<absent>"
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// dropDefaultPullPolicy removes imagePullPolicy IfNotPresent from the
// containers of a workload's pod template.
func dropDefaultPullPolicy(obj map[string]any) {
	containers, _, _ := unstructured.NestedSlice(obj, "spec", "template", "spec", "containers")
	for _, c := range containers {
		if m := c.(map[string]any); m["imagePullPolicy"] == "IfNotPresent" {
			delete(m, "imagePullPolicy")
		}
	}
	if containers != nil {
		_ = unstructured.SetNestedSlice(obj, containers, "spec", "template", "spec", "containers")
	}
}
