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

package stepaside

import (
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Counterpart is one of kube-controller-manager's two controllers of
// lifecycle.k8s.io (Kubernetes 1.38 and later). Its name is its controller
// name in kube-controller-manager, the field manager of its writes, and the
// --controllers name of the controller of this process that does the same
// job and steps aside for it alone.
type Counterpart string

const (
	// EvictionRequestController creates the Evictions of EvictionRequests
	// and keeps their status.
	EvictionRequestController Counterpart = "evictionrequest-controller"
	// ImperativeEvictionResponder is the default evictor
	// (imperative-eviction.k8s.io/evictor).
	ImperativeEvictionResponder Counterpart = "imperative-eviction-responder-controller"
)

// Counterparts are both, in the order their step-asides are logged.
var Counterparts = []Counterpart{EvictionRequestController, ImperativeEvictionResponder}

// ManagersRead are the field managers whose managedFields entries the guard
// reads: whoever builds its caches keeps them (the rest of managedFields
// may go).
var ManagersRead = []string{string(EvictionRequestController), string(ImperativeEvictionResponder)}

// place is where a write lands: the kind of the object and its
// subresource ("" for the object itself).
type place struct {
	kind, subresource string
}

// evidence lists, for each counterpart, the places its writes count as
// evidence that it runs: where it writes and where Kubernetes' built-in
// roles do not let users write. edit and admin may create, update and
// patch EvictionRequests themselves in their namespaces, so a write there,
// under whatever field manager, says nothing of who made it; the status of
// EvictionRequests and Evictions are written only by the controllers and,
// for an Eviction's status, its responders. Which identities may use the
// counterparts' names at all is the reservation policy's to enforce
// (Policy): the places only narrow what a policy gone astray would let by.
var evidence = map[Counterpart][]place{
	EvictionRequestController: {
		{kind: "EvictionRequest", subresource: "status"},
		{kind: "Eviction", subresource: ""},
		{kind: "Eviction", subresource: "status"},
	},
	ImperativeEvictionResponder: {
		{kind: "Eviction", subresource: "status"},
	},
}

// recentWrite bounds how far from now the time of a write may be for the
// guard to count it: a restored or copied object carries the entries of
// writes long past, which say nothing of now. It is wide, for clocks that
// disagree.
const recentWrite = 10 * time.Minute

// Write is a write of a counterpart's, as an object's managedFields show it.
type Write struct {
	// Counterpart wrote.
	Counterpart Counterpart
	// Kind is the kind of the object written; Subresource where the write
	// landed ("" for the object itself); Operation Apply or Update.
	Kind, Subresource string
	Operation         metav1.ManagedFieldsOperationType
	// Time is when kube-apiserver recorded the write.
	Time time.Time
}

// Place says where the write landed, as kubectl names it.
func (w Write) Place() string {
	if w.Subresource == "" {
		return w.Kind
	}
	return w.Kind + " " + w.Subresource
}

// writesSeen finds in after, the managedFields of an object of kind, the
// writes of counterparts that before (the entries the cache held, nil for
// an object new to it) lacks or holds with an older time, at a place that
// counts as evidence, within recentWrite of now: writes seen as they
// happened. Entries already in the cache's first list say nothing of now:
// a kube-controller-manager that handed its objects over and stopped wrote
// them, or a release of this project that used upstream's field manager;
// nor do old entries on an object restored from a backup. Comparing entries
// rather than the process's start time holds whatever the skew between
// this process and kube-apiserver, within recentWrite.
func writesSeen(kind string, before, after []metav1.ManagedFieldsEntry, now time.Time) []Write {
	var writes []Write
	for _, e := range after {
		counterpart := Counterpart(e.Manager)
		if e.Time == nil || !slices.Contains(evidence[counterpart], place{kind: kind, subresource: e.Subresource}) {
			continue
		}
		if age := now.Sub(e.Time.Time); age > recentWrite || age < -recentWrite {
			continue
		}
		seen := func(b metav1.ManagedFieldsEntry) bool {
			return b.Manager == e.Manager && b.Operation == e.Operation && b.Subresource == e.Subresource && b.Time != nil && !e.Time.After(b.Time.Time)
		}
		if !slices.ContainsFunc(before, seen) {
			writes = append(writes, Write{Counterpart: counterpart, Kind: kind, Subresource: e.Subresource, Operation: e.Operation, Time: e.Time.Time})
		}
	}
	return writes
}
