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

package manifests

import (
	"encoding/json"
	"strings"
	"testing"
)

const testFrame = `{"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "t",
  "properties": {"global": {"type": "object"}},
  "$defs": {"stringMap": {"type": "object", "additionalProperties": {"type": "string"}}}}`

// schemaOf generates the schema of values with testFrame and decodes it.
func schemaOf(t *testing.T, values string) map[string]any {
	t.Helper()
	out, err := Schema([]byte(values), []byte(testFrame))
	if err != nil {
		t.Fatalf("Schema: %v", err)
	}
	var schema map[string]any
	if err := json.Unmarshal(out, &schema); err != nil {
		t.Fatalf("the schema is not JSON: %v\n%s", err, out)
	}
	return schema
}

// property is the schema of the value at the dotted path.
func property(t *testing.T, schema map[string]any, path string) map[string]any {
	t.Helper()
	node := schema
	for _, key := range strings.Split(path, ".") {
		next, ok := node["properties"].(map[string]any)[key].(map[string]any)
		if !ok {
			t.Fatalf("the schema has no %s", path)
		}
		node = next
	}
	return node
}

// asJSON is v as compact JSON, to compare schemas.
func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestTheSchemaTakesEachTypeFromTheDefault(t *testing.T) {
	schema := schemaOf(t, `
# -- A map.
server:
  # -- Replicas.
  replicas: 1
  # -- A ratio.
  ratio: 0.5
  # -- On or off.
  enabled: true
  # -- A name.
  name: x
  # -- Ports.
  ports: [80]
`)
	for path, want := range map[string]string{
		"server.replicas": `{"description":"Replicas.","type":"integer"}`,
		"server.ratio":    `{"description":"A ratio.","type":"number"}`,
		"server.enabled":  `{"description":"On or off.","type":"boolean"}`,
		"server.name":     `{"description":"A name.","type":"string"}`,
		"server.ports":    `{"description":"Ports.","items":{"type":"integer"},"type":"array"}`,
	} {
		if got := asJSON(t, property(t, schema, path)); got != want {
			t.Errorf("%s: got %s, want %s", path, got, want)
		}
	}
	server := property(t, schema, "server")
	if server["type"] != "object" || server["additionalProperties"] != false {
		t.Errorf("a map takes only its own keys: got %s", asJSON(t, server))
	}
}

func TestTheSchemaAddsTheAnnotationsKeywords(t *testing.T) {
	schema := schemaOf(t, `
# -- The webhook's failurePolicy.
# @schema {"enum": ["Ignore", "Fail"]}
# @schema {"minLength": 1}
failurePolicy: Ignore
# -- Labels; an annotation's $ref stands for the type of the default.
# @schema {"$ref": "#/$defs/stringMap"}
labels: {}
# -- Users; an empty list says what it holds.
# @schema {"items": {"type": "string"}}
users: []
# -- Unset by default.
# @schema {"type": ["string", "null"]}
override: null
`)
	for path, want := range map[string]string{
		"failurePolicy": `{"description":"The webhook's failurePolicy.","enum":["Ignore","Fail"],"minLength":1,"type":"string"}`,
		"labels":        `{"$ref":"#/$defs/stringMap","description":"Labels; an annotation's $ref stands for the type of the default."}`,
		"users":         `{"description":"Users; an empty list says what it holds.","items":{"type":"string"},"type":"array"}`,
		"override":      `{"description":"Unset by default.","type":["string","null"]}`,
	} {
		if got := asJSON(t, property(t, schema, path)); got != want {
			t.Errorf("%s: got %s, want %s", path, got, want)
		}
	}
}

func TestTheSchemaKeepsTheFrameAndTheOrderOfValues(t *testing.T) {
	out, err := Schema([]byte("# -- B.\nb: 1\n# -- A.\na: 2\n"), []byte(testFrame))
	if err != nil {
		t.Fatal(err)
	}
	text := string(out)
	order := []string{`"$schema"`, `"title"`, `"type": "object"`, `"additionalProperties": false`, `"global"`, `"b"`, `"a"`, `"$defs"`, `"stringMap"`}
	at := 0
	for _, want := range order {
		i := strings.Index(text[at:], want)
		if i < 0 {
			t.Fatalf("%s is missing or out of order (want %v):\n%s", want, order, text)
		}
		at += i
	}
	if !strings.HasSuffix(text, "}\n") {
		t.Errorf("the schema does not end with a newline")
	}
}

func TestTheSchemaRefusesWhatItCannotType(t *testing.T) {
	for name, values := range map[string]string{
		"an empty list":         "# -- Users.\nusers: []\n",
		"a null":                "# -- Unset.\noverride: null\n",
		"a broken annotation":   "# -- Users.\n# @schema {\"enum\": [\nname: x\n",
		"an annotation no JSON": "# -- Users.\n# @schema enum x\nname: x\n",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := Schema([]byte(values), []byte(testFrame)); err == nil {
				t.Errorf("Schema accepted %q", values)
			}
		})
	}
}

func TestAnAnnotationIsNoPartOfTheDescription(t *testing.T) {
	values, err := Values([]byte("# -- The failurePolicy.\n# @schema {\"enum\": [\"Ignore\"]}\nfailurePolicy: Ignore\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := values[0].Description, "The failurePolicy."; got != want {
		t.Errorf("description %q, want %q", got, want)
	}
}
