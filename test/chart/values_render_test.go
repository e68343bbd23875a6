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
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/evictionrequest/apiserver/internal/manifests"
)

// readOnlyAtUpgrade are the values no render shows: the chart reads them
// only through lookup, against the cluster, at helm upgrade.
var readOnlyAtUpgrade = map[string]string{}

// extraBases are configurations beside the chart's scenarios under which
// values that no scenario turns on take effect, given as values files (the
// lowest precedence, so that the --set-json of a change wins).
var extraBases = map[string]map[string]any{
	"external etcd": {"apiserver": map[string]any{"etcd": map[string]any{"mode": "external",
		"external": map[string]any{"servers": []any{"https://etcd.example.com:2379"}, "clientSecretName": "etcd-client"}}}},
	"both APIs, the bridge on lifecycle and the drain": {
		"apis":           map[string]any{"lifecycle": map[string]any{"enabled": true}},
		"evictionBridge": map[string]any{"enabled": true, "api": "lifecycle", "clientAuthentication": map[string]any{"enabled": true, "caBundle": "example"}},
		"nodeDrain":      map[string]any{"enabled": true, "poolLabel": "example.com/pool", "maxConcurrentDrainsPerPool": "1"},
	},
	"the bridge serving any caller": {"evictionBridge": map[string]any{"enabled": true,
		"clientAuthentication": map[string]any{"allowUnauthenticatedCallers": true, "caBundle": "example"}}},
	"a PriorityClass of the admin's own": {"priorityClass": map[string]any{"create": true, "name": "evictionrequest-system"}},
	"budgets by maxUnavailable":          budgets("", 1),
	"budgets by minAvailable":            budgets(1, ""),
}

// budgets is every PodDisruptionBudget on, with minAvailable and
// maxUnavailable, on replicated components.
func budgets(minAvailable, maxUnavailable any) map[string]any {
	budget := map[string]any{"enabled": true, "minAvailable": minAvailable, "maxUnavailable": maxUnavailable}
	return map[string]any{
		"apis":             map[string]any{"lifecycle": map[string]any{"enabled": true}},
		"apiserver":        map[string]any{"replicas": 2, "etcd": map[string]any{"mode": "statefulset", "statefulset": map[string]any{"podDisruptionBudget": budget}}, "podDisruptionBudget": budget},
		"controller":       map[string]any{"podDisruptionBudget": budget},
		"surgeInterceptor": map[string]any{"podDisruptionBudget": budget},
	}
}

// Every value of values.yaml changes what the chart renders under some
// configuration (its defaults, a scenario of ci/, or one of extraBases), or
// makes the chart refuse to render with a message that names it:
// no value is read by nothing, and every one is rendered by this test. A
// value is changed as its type allows (another enumerated value, a number
// plus one, a flipped bool, an element added, a key added or the default
// removed) until one change renders differently.
func TestEveryValueChangesTheRender(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(chartDir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	values, err := manifests.Values(data)
	if err != nil {
		t.Fatal(err)
	}
	schema := readSchema(t)
	bases := renderBases(t)
	sem := make(chan struct{}, 2)
	for _, v := range values {
		t.Run(v.Path, func(t *testing.T) {
			t.Parallel()
			if why, ok := readOnlyAtUpgrade[v.Path]; ok {
				t.Skipf("read only at helm upgrade, %s", why)
			}
			for _, base := range nearestFirst(bases, v.Path) {
				for _, candidate := range candidates(v, schema) {
					sem <- struct{}{}
					got, err := renderNormalized(append(append([]string(nil), base.args...), "--set-json="+v.Path+"="+candidate))
					<-sem
					if err == nil && got != base.rendered || refusedByName(err, v.Path) {
						return
					}
				}
			}
			t.Errorf("no change of %s (%s, default %v) changes what the chart renders, under its defaults, its scenarios or %d other configurations", v.Path, v.Type, v.Default, len(extraBases))
		})
	}
}

// refusedByName is true when err is the chart refusing a render with a
// message that names path: a value the chart checks against the others
// (evictionBridge.clientAuthentication.allowUnauthenticatedCallers beside
// client authentication) takes effect there.
func refusedByName(err error, path string) bool {
	return err != nil && strings.Contains(err.Error(), path)
}

// base is a configuration and what the chart renders with it.
type base struct {
	args     []string
	rendered string
	// keys are the dotted keys its values set.
	keys []string
}

// nearestFirst orders bases by how many leading segments of path the keys
// they set share, most first: a value takes effect where its feature is
// on, which is where a configuration sets its neighbours.
func nearestFirst(bases []base, path string) []base {
	segments := strings.Split(path, ".")
	shared := func(b base) int {
		best := 0
		for _, key := range b.keys {
			n, keySegments := 0, strings.Split(key, ".")
			for n < len(segments) && n < len(keySegments) && segments[n] == keySegments[n] {
				n++
			}
			best = max(best, n)
		}
		return best
	}
	sorted := slices.Clone(bases)
	slices.SortStableFunc(sorted, func(a, b base) int { return shared(b) - shared(a) })
	return sorted
}

// keysOf are the dotted keys of the leaves of values.
func keysOf(values map[string]any, prefix string) []string {
	var keys []string
	for k, v := range values {
		if m, ok := v.(map[string]any); ok && len(m) > 0 {
			keys = append(keys, keysOf(m, prefix+k+".")...)
			continue
		}
		keys = append(keys, prefix+k)
	}
	return keys
}

// renderBases renders the chart's defaults, each scenario and each of
// extraBases.
func renderBases(t *testing.T) []base {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(chartDir, "ci", "*-values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, values := range extraBases {
		data, err := json.Marshal(values)
		if err != nil {
			t.Fatal(err)
		}
		// helm splits --values at commas: a name without any.
		file := filepath.Join(dir, fmt.Sprintf("base-%d.json", len(files)))
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, file)
	}
	defaults, err := renderNormalized(nil)
	if err != nil {
		t.Fatal(err)
	}
	bases := []base{{rendered: defaults}}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var values map[string]any
		if err := yaml.Unmarshal(data, &values); err != nil {
			t.Fatal(err)
		}
		args := []string{"--values=" + file}
		rendered, err := renderNormalized(args)
		if err != nil {
			t.Fatal(err)
		}
		bases = append(bases, base{args: args, rendered: rendered, keys: keysOf(values, "")})
	}
	return bases
}

var (
	// generatedData is what the chart generates anew at every render (mode
	// generated): certificates and keys, and their checksum.
	generatedData = regexp.MustCompile(`(ca\.crt|tls\.crt|tls\.key|caBundle): [A-Za-z0-9+/=]{400,}|checksum/serving-certificate: [0-9a-f]{64}`)
	notAfter      = regexp.MustCompile(`evictionrequest\.github\.io/not-after: "(\d+)"`)
)

// renderNormalized is what the chart renders with args, what it generates
// at every render replaced by a placeholder, and the generated
// certificate's expiry as days from now.
func renderNormalized(args []string) (string, error) {
	out, err := runHelm(append([]string{"template", "evictionrequest", chartDir, "--namespace=" + namespace}, args...)...)
	if err != nil {
		return "", err
	}
	out = generatedData.ReplaceAllStringFunc(out, func(m string) string {
		key, _, _ := strings.Cut(m, ":")
		return key + ": <generated>"
	})
	return notAfter.ReplaceAllStringFunc(out, func(m string) string {
		seconds, _ := strconv.ParseInt(notAfter.FindStringSubmatch(m)[1], 10, 64)
		return fmt.Sprintf("not-after: in %d days", (seconds-time.Now().Unix()+43200)/86400)
	}), nil
}

// candidates are the changes of v to try, as JSON, most likely first.
func candidates(v manifests.Value, schema *jsonSchema) []string {
	var out []any
	switch def := v.Default.(type) {
	case bool:
		out = append(out, !def)
	case int:
		out = append(out, def+1, def+2)
	case float64:
		out = append(out, def+1)
	case string:
		for _, e := range schema.enum(v.Path) {
			if e != def {
				out = append(out, e)
			}
		}
		out = append(out, "example", "7", "42s", "10m", "eA==", "example.com", "1.2.3", "example.com/example")
	case []any:
		if len(def) > 0 {
			out = append(out, []any{})
		}
		out = append(out, []any{"--example"}, []any{"example.com"}, []any{"https://example.com:2379"}, []any{map[string]any{"name": "example"}},
			[]any{map[string]any{"key": "example.com/x", "operator": "Exists", "effect": "NoSchedule"}},
			[]any{map[string]any{"maxSkew": 1, "topologyKey": "example.com/zone", "whenUnsatisfiable": "ScheduleAnyway"}},
			// A participant rule.
			[]any{map[string]any{"name": "example", "interceptor": "example.com", "responder": map[string]any{"name": "example.com/example", "priority": 5000}}})
	case map[string]any:
		if len(def) > 0 {
			out = append(out, nil)
		}
		out = append(out, map[string]any{"example.com/x": "y"}, map[string]any{"type": "Recreate"}, map[string]any{"requests": map[string]any{"cpu": "7"}},
			map[string]any{"runAsUser": 7}, map[string]any{"nodeAffinity": map[string]any{}},
			map[string]any{"matchLabels": map[string]any{"example.com/x": "y"}})
	}
	var encoded []string
	for _, c := range out {
		data, _ := json.Marshal(c)
		encoded = append(encoded, string(data))
	}
	return encoded
}

// jsonSchema is values.schema.json, for the enumerations of its values.
type jsonSchema struct {
	root map[string]any
}

func readSchema(t *testing.T) *jsonSchema {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(chartDir, "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	s := &jsonSchema{}
	if err := json.Unmarshal(data, &s.root); err != nil {
		t.Fatal(err)
	}
	return s
}

// enum is the enumeration of the value at path, nil when it has none.
func (s *jsonSchema) enum(path string) []string {
	node := s.root
	for _, key := range strings.Split(path, ".") {
		node = s.resolve(node)
		properties, _ := node["properties"].(map[string]any)
		next, ok := properties[key].(map[string]any)
		if !ok {
			return nil
		}
		node = next
	}
	var out []string
	enum, _ := s.resolve(node)["enum"].([]any)
	for _, e := range enum {
		if str, ok := e.(string); ok {
			out = append(out, str)
		}
	}
	return out
}

// resolve follows a node's "$ref" to the schema's "$defs".
func (s *jsonSchema) resolve(node map[string]any) map[string]any {
	ref, ok := node["$ref"].(string)
	if !ok {
		return node
	}
	defs, _ := s.root["$defs"].(map[string]any)
	resolved, _ := defs[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any)
	return resolved
}
