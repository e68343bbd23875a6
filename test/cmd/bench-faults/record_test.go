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

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/evictionrequest/apiserver/internal/faults/history"
	"github.com/evictionrequest/apiserver/internal/wrappers"
)

// A list after a lost watch version records only what the lost stretch
// may hide: an object written since (a Gap), an object gone since (a Gap,
// then Deleted), an object new since (a Gap); an object at the version
// last recorded is not recorded again.
func TestARelistRecordsWhatTheLostStretchMayHide(t *testing.T) {
	path := filepath.Join(t.TempDir(), "record.jsonl")
	w, err := history.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	pod := func(name, rv string) *corev1.Pod {
		p := wrappers.MakePod(name).UID("uid-" + name).Obj()
		p.ResourceVersion = rv
		return p
	}
	seen := lastSeen{}
	for _, p := range []*corev1.Pod{pod("same", "1"), pod("written", "2"), pod("gone", "3")} {
		seen.observe(history.Added, p)
	}
	r := &recorder{w: w}
	r.relisted(history.KindPod, []runtime.Object{pod("same", "1"), pod("written", "5"), pod("new", "6")}, seen)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	entries, err := history.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		var p corev1.Pod
		if err := json.Unmarshal(e.Object, &p); err != nil {
			t.Fatal(err)
		}
		got = append(got, p.Name+" "+e.Type)
	}
	want := []string{"written GAP", "new GAP", "gone GAP", "gone DELETED"}
	if !slices.Equal(got, want) {
		t.Errorf("recorded %q, want %q", got, want)
	}
	if _, ok := seen["uid-gone"]; ok || len(seen) != 3 {
		t.Errorf("after the list, the recorder knows %d objects (gone among them: %v), want the 3 listed", len(seen), ok)
	}
}
