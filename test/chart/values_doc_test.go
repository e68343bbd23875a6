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
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	yaml "go.yaml.in/yaml/v3"
)

// The README's table of values documents every value of values.yaml, by
// its key and with the description of its "# --" comment, and nothing else.
func TestTheREADMEDocumentsEveryValue(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(chartDir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		t.Fatal(err)
	}
	values := map[string]string{}
	documented(root.Content[0], "", values)
	readme, err := os.ReadFile(filepath.Join(chartDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := tableRows(string(readme))
	if len(rows) == 0 {
		t.Fatal("the README has no table | Key | Type | Default | Description |")
	}
	if diff := cmp.Diff(values, rows); diff != "" {
		t.Errorf("values.yaml's documented values (-) and the README's table (+) differ:\n%s", diff)
	}
}

// documented records, for every value of node under prefix, the
// description of its "# --" comment: the values a user sets, down to the
// maps and lists set whole, which have a comment of their own and nothing
// documented below.
func documented(node *yaml.Node, prefix string, into map[string]string) {
	for i := 0; i+1 < len(node.Content); i += 2 {
		key, value := node.Content[i], node.Content[i+1]
		path := key.Value
		if prefix != "" {
			path = prefix + "." + key.Value
		}
		description := descriptionOf(key.HeadComment)
		if value.Kind == yaml.MappingNode && len(value.Content) > 0 && hasDocumentedChild(value) {
			documented(value, path, into)
			continue
		}
		into[path] = description
	}
}

func hasDocumentedChild(node *yaml.Node) bool {
	for i := 0; i+1 < len(node.Content); i += 2 {
		if strings.Contains(node.Content[i].HeadComment, "# --") {
			return true
		}
	}
	return false
}

// descriptionOf is the text of a "# --" comment, its lines joined.
func descriptionOf(comment string) string {
	_, after, found := strings.Cut(comment, "# --")
	if !found {
		return "<undocumented>"
	}
	var words []string
	for _, line := range strings.Split(after, "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "#"))
		if line != "" {
			words = append(words, line)
		}
	}
	return strings.Join(words, " ")
}

var tableRow = regexp.MustCompile("^\\| *`?([a-zA-Z0-9_.\\-]+)`? *\\|[^|]*\\|[^|]*\\| *(.*?) *\\|$")

// tableRows reads the README's table of values: description by key.
func tableRows(readme string) map[string]string {
	rows := map[string]string{}
	in := false
	for _, line := range strings.Split(readme, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "| Key | Type | Default | Description |"):
			in = true
		case in && strings.HasPrefix(line, "|"):
			if m := tableRow.FindStringSubmatch(line); m != nil && !strings.HasPrefix(m[1], "-") {
				rows[m[1]] = strings.ReplaceAll(m[2], "\\|", "|")
			}
		case in:
			in = false
		}
	}
	return rows
}
