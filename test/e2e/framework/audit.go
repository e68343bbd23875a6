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

package framework

import (
	"bufio"
	"encoding/json"
	"os"
	"testing"
	"time"
)

// AuditedEviction is one eviction of a pod that kube-apiserver's audit
// log recorded.
type AuditedEviction struct {
	// User is who asked for it.
	User string
	// Code is kube-apiserver's answer: 201 granted, 429 refused.
	Code int
	// Time is when kube-apiserver answered.
	Time time.Time
}

// AuditedEvictions counts, from kube-apiserver's audit log, the eviction
// requests it received for pod ns/name and those it granted.
func (f *Framework) AuditedEvictions(t testing.TB, ns, name string) (attempts, granted int) {
	t.Helper()
	for _, e := range f.AuditedEvictionsOf(t, ns, name) {
		attempts++
		if e.Code == 201 {
			granted++
		}
	}
	return attempts, granted
}

// AuditedEvictionsOf lists, oldest first, the eviction requests
// kube-apiserver's audit log recorded for pod ns/name.
func (f *Framework) AuditedEvictionsOf(t testing.TB, ns, name string) []AuditedEviction {
	t.Helper()
	file, err := os.Open(f.AuditLogPath)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	var evictions []AuditedEviction
	scanner := bufio.NewScanner(file)
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	for scanner.Scan() {
		var event struct {
			Stage string `json:"stage"`
			Verb  string `json:"verb"`
			User  struct {
				Username string `json:"username"`
			} `json:"user"`
			ObjectRef struct {
				Resource, Subresource, Namespace, Name string
			} `json:"objectRef"`
			ResponseStatus struct {
				Code int `json:"code"`
			} `json:"responseStatus"`
			StageTimestamp time.Time `json:"stageTimestamp"`
		}
		if err := json.Unmarshal(scanner.Bytes(), &event); err != nil {
			continue
		}
		ref := event.ObjectRef
		if event.Stage == "ResponseComplete" && event.Verb == "create" && ref.Resource == "pods" && ref.Subresource == "eviction" &&
			ref.Namespace == ns && ref.Name == name {
			evictions = append(evictions, AuditedEviction{User: event.User.Username, Code: event.ResponseStatus.Code, Time: event.StageTimestamp})
		}
	}
	if err := scanner.Err(); err != nil {
		t.Fatal(err)
	}
	return evictions
}
