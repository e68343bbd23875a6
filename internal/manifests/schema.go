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
	"fmt"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

const (
	// SchemaFile is the chart's JSON Schema of its values, which helm
	// checks every install and upgrade against; make manifests writes it
	// from values.yaml and SchemaFrameFile.
	SchemaFile = "values.schema.json"
	// SchemaFrameFile holds what values.yaml cannot say: the schema's
	// $schema and title, the shapes of Kubernetes types its values refer
	// to ($defs), and the values Helm itself sets (global).
	SchemaFrameFile = "values.schema.frame.json"
	// schemaAnnotation starts a comment line of values.yaml that adds JSON
	// Schema keywords to the schema of the value below it, as a JSON
	// object on one line; a "$ref" replaces what values.yaml's default
	// says of its type.
	schemaAnnotation = "@schema"
)

// Schema is the chart's values.schema.json: frame (SchemaFrameFile) with
// the schema of every value of values, in the order of values.yaml. A
// value's type is that of its default (a map's keys are the only ones it
// takes); its "# --" comment is its description; its "# @schema" lines add
// keywords. A null default, or an empty list, needs a "# @schema" that
// says what it holds.
func Schema(values, frame []byte) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(values, &root); err != nil {
		return nil, err
	}
	if len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("values.yaml is not a map")
	}
	base, err := parseJSONObject(frame)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", SchemaFrameFile, err)
	}
	properties, defs := jsonObject{}, jsonObject{}
	schema := jsonObject{}
	for _, m := range base {
		switch m.key {
		case "properties":
			if properties, err = parseJSONObject(m.value.(json.RawMessage)); err != nil {
				return nil, fmt.Errorf("%s: properties: %w", SchemaFrameFile, err)
			}
		case "$defs":
			defs = defs.with(m.key, m.value)
		default:
			schema = schema.with(m.key, m.value)
		}
	}
	generated, err := mapSchema(root.Content[0], "")
	if err != nil {
		return nil, err
	}
	for _, m := range generated {
		properties = properties.with(m.key, m.value)
	}
	schema = append(schema.with("type", "object").with("additionalProperties", false).with("properties", properties), defs...)
	out, err := json.MarshalIndent(schema, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// mapSchema is the schema of each key of the map node under prefix.
func mapSchema(node *yaml.Node, prefix string) (jsonObject, error) {
	properties := jsonObject{}
	for i := 0; i+1 < len(node.Content); i += 2 {
		key, value := node.Content[i], node.Content[i+1]
		path := key.Value
		if prefix != "" {
			path = prefix + "." + key.Value
		}
		schema, err := valueSchema(key, value, path)
		if err != nil {
			return nil, err
		}
		properties = properties.with(key.Value, schema)
	}
	return properties, nil
}

// valueSchema is the schema of the value at path, from its default and
// its key's comments.
func valueSchema(key, value *yaml.Node, path string) (jsonObject, error) {
	schema := jsonObject{}
	if description, ok := descriptionOf(key.HeadComment); ok {
		schema = schema.with("description", description)
	}
	annotations, err := annotationsOf(key.HeadComment)
	if err != nil {
		return nil, fmt.Errorf("value %s: %w", path, err)
	}
	if !annotations.has("$ref") {
		inferred, err := defaultSchema(value, path, annotations)
		if err != nil {
			return nil, err
		}
		schema = append(schema, inferred...)
	}
	for _, m := range annotations {
		schema = schema.with(m.key, m.value)
	}
	return schema, nil
}

// defaultSchema is what a value's default says of its type: a map takes
// its keys only, a list holds what its first item is. annotations are the
// value's own keywords, which may say what an empty list holds.
func defaultSchema(node *yaml.Node, path string, annotations jsonObject) (jsonObject, error) {
	switch node.Kind {
	case yaml.MappingNode:
		properties, err := mapSchema(node, path)
		if err != nil {
			return nil, err
		}
		return jsonObject{{"type", "object"}, {"additionalProperties", false}, {"properties", properties}}, nil
	case yaml.SequenceNode:
		list := jsonObject{{"type", "array"}}
		if annotations.has("items") {
			return list, nil
		}
		if len(node.Content) == 0 {
			return nil, fmt.Errorf("value %s is an empty list: say what it holds with # %s {\"items\": ...}", path, schemaAnnotation)
		}
		items, err := defaultSchema(node.Content[0], path+"[0]", nil)
		if err != nil {
			return nil, err
		}
		return list.with("items", items), nil
	case yaml.ScalarNode:
		if node.Tag == "!!null" {
			if annotations.has("type") {
				return nil, nil
			}
			return nil, fmt.Errorf("value %s is null: give its type with # %s {\"type\": ...}", path, schemaAnnotation)
		}
		return jsonObject{{"type", scalarType(node.Tag)}}, nil
	}
	return nil, fmt.Errorf("value %s: an alias or a document has no schema", path)
}

// scalarType is the JSON Schema type of a scalar of YAML tag.
func scalarType(tag string) string {
	switch tag {
	case "!!int":
		return "integer"
	case "!!float":
		return "number"
	case "!!bool":
		return "boolean"
	}
	return "string"
}

// annotationsOf are the keywords of a comment's "# @schema" lines, merged
// in their order.
func annotationsOf(comment string) (jsonObject, error) {
	var out jsonObject
	for _, line := range strings.Split(comment, "\n") {
		text, ok := strings.CutPrefix(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "#")), schemaAnnotation)
		if !ok {
			continue
		}
		keywords, err := parseJSONObject([]byte(text))
		if err != nil {
			return nil, fmt.Errorf("# %s: %w", schemaAnnotation, err)
		}
		for _, m := range keywords {
			out = out.with(m.key, m.value)
		}
	}
	return out, nil
}

// isAnnotation is true for a comment line of a "# @schema" annotation,
// which is no part of a value's description.
func isAnnotation(line string) bool {
	return strings.HasPrefix(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "#")), schemaAnnotation)
}
