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
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// READMEFile is the chart's README, whose table of values make manifests
// writes from values.yaml.
const READMEFile = "README.md"

// tableHeader starts the README's table of values.
const tableHeader = "| Key | Type | Default | Description |"

// Value is a value of values.yaml a user sets: a leaf, or a map or list
// set whole (which documents nothing below it).
type Value struct {
	// Path is its dotted key, such as apiserver.replicas.
	Path string
	// Type is its type as the README names it: string, int, bool, float,
	// list or object.
	Type string
	// Default is its default, decoded.
	Default any
	// Description is the text of its "# --" comment.
	Description string
}

// Values are the values of values.yaml, in their order. A value without a
// "# --" comment is an error.
func Values(values []byte) ([]Value, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(values, &root); err != nil {
		return nil, err
	}
	if len(root.Content) == 0 {
		return nil, fmt.Errorf("values.yaml is empty")
	}
	var out []Value
	if err := collectValues(root.Content[0], "", &out); err != nil {
		return nil, err
	}
	return out, nil
}

// ValuesTable is the README's table of the values of values.yaml, in their
// order: each value a user sets with its type, its default as JSON and the
// description of its "# --" comment.
func ValuesTable(values []byte) (string, error) {
	all, err := Values(values)
	if err != nil {
		return "", err
	}
	var rows []string
	for _, v := range all {
		def, err := json.Marshal(v.Default)
		if err != nil {
			return "", fmt.Errorf("value %s: %w", v.Path, err)
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | `%s` | %s |", v.Path, v.Type, def, strings.ReplaceAll(v.Description, "|", "\\|")))
	}
	return tableHeader + "\n|-----|------|---------|-------------|\n" + strings.Join(rows, "\n") + "\n", nil
}

// collectValues appends every value of node under prefix.
func collectValues(node *yaml.Node, prefix string, out *[]Value) error {
	for i := 0; i+1 < len(node.Content); i += 2 {
		key, value := node.Content[i], node.Content[i+1]
		path := key.Value
		if prefix != "" {
			path = prefix + "." + key.Value
		}
		if value.Kind == yaml.MappingNode && hasDocumentedChild(value) {
			if err := collectValues(value, path, out); err != nil {
				return err
			}
			continue
		}
		description, ok := descriptionOf(key.HeadComment)
		if !ok {
			return fmt.Errorf("value %s has no \"# --\" comment", path)
		}
		var def any
		if err := value.Decode(&def); err != nil {
			return fmt.Errorf("value %s: %w", path, err)
		}
		*out = append(*out, Value{Path: path, Type: typeOf(value), Default: def, Description: description})
	}
	return nil
}

// hasDocumentedChild is true for a map whose keys are values of their own.
func hasDocumentedChild(node *yaml.Node) bool {
	for i := 0; i+1 < len(node.Content); i += 2 {
		if strings.Contains(node.Content[i].HeadComment, "# --") {
			return true
		}
	}
	return false
}

// descriptionOf is the text of a "# --" comment, its lines joined, but
// its "# @schema" lines.
func descriptionOf(comment string) (string, bool) {
	_, after, found := strings.Cut(comment, "# --")
	if !found {
		return "", false
	}
	var words []string
	for _, line := range strings.Split(after, "\n") {
		if isAnnotation(line) {
			continue
		}
		if line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "#")); line != "" {
			words = append(words, line)
		}
	}
	return strings.Join(words, " "), true
}

// typeOf is the type of a value as the README names it.
func typeOf(node *yaml.Node) string {
	switch node.Kind {
	case yaml.MappingNode:
		return "object"
	case yaml.SequenceNode:
		return "list"
	}
	switch node.Tag {
	case "!!int":
		return "int"
	case "!!bool":
		return "bool"
	case "!!float":
		return "float"
	}
	return "string"
}

// WithValuesTable is readme with its table of values replaced by table.
func WithValuesTable(readme []byte, table string) ([]byte, error) {
	start := bytes.Index(readme, []byte(tableHeader))
	if start < 0 {
		return nil, fmt.Errorf("the README has no table %s", tableHeader)
	}
	end := start
	for end < len(readme) && readme[end] == '|' {
		next := bytes.IndexByte(readme[end:], '\n')
		if next < 0 {
			end = len(readme)
			break
		}
		end += next + 1
	}
	out := append([]byte(nil), readme[:start]...)
	out = append(out, table...)
	return append(out, readme[end:]...), nil
}
