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
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
)

// RecordName is the name of the ConfigMap that records, in the namespace
// evictionrequest-controller runs in, which of its controllers stepped
// aside and why.
const RecordName = "evictionrequest-controller-stepped-aside"

// recordFieldManager is the field manager of the record's writes.
const recordFieldManager = "evictionrequest.github.io/step-aside-guard"

// Decision is why a controller stepped aside: the write of its
// counterpart's that showed that the counterpart runs.
type Decision struct {
	// Object is the written object, as kind namespace/name.
	Object string `json:"object"`
	// Place is the kind and subresource the write landed on.
	Place string `json:"place"`
	// Written is when kube-apiserver recorded the write.
	Written time.Time `json:"written"`
}

// Record keeps the decisions to step aside across restarts and leadership
// terms, one key per counterpart: kube-controller-manager's controllers
// write only when something changes, so a process that restarted beside
// them would otherwise act, on the Evictions in progress and on the next
// one, before seeing them write again. Only an admin takes a decision
// back, by removing its key or the ConfigMap; a ConfigMap an admin writes
// with no data at all keeps both controllers aside.
type Record struct {
	// ConfigMaps is where the record is kept.
	ConfigMaps typedcorev1.ConfigMapsGetter
	// Namespace is the namespace of the record.
	Namespace string
	// CallTimeout bounds each call to kube-apiserver.
	CallTimeout time.Duration
}

// String names the record as kubectl does, for logs and messages.
func (r *Record) String() string {
	return fmt.Sprintf("configmap/%s -n %s", RecordName, r.Namespace)
}

// Loaded is what a record holds.
type Loaded struct {
	// Decisions are the counterparts recorded, with why.
	Decisions map[Counterpart]Decision
	// Ignored are keys the record holds that decide nothing, with why:
	// those of earlier releases, which trusted any writer's field manager,
	// and values that do not parse.
	Ignored map[string]string
}

// Load returns what the record holds: nil when there is none.
func (r *Record) Load(ctx context.Context) (*Loaded, error) {
	ctx, cancel := context.WithTimeout(ctx, r.CallTimeout)
	defer cancel()
	cm, err := r.ConfigMaps.ConfigMaps(r.Namespace).Get(ctx, RecordName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", r, err)
	}
	loaded := &Loaded{Decisions: map[Counterpart]Decision{}, Ignored: map[string]string{}}
	if len(cm.Data) == 0 {
		// An admin's record without data keeps both aside.
		for _, c := range Counterparts {
			loaded.Decisions[c] = Decision{Object: "(none: recorded by hand)"}
		}
		return loaded, nil
	}
	for key, value := range cm.Data {
		var d Decision
		switch {
		case !isCounterpart(key):
			loaded.Ignored[key] = "not a controller this process steps aside (an earlier release's record, which trusted any writer's field manager, says nothing)"
		case json.Unmarshal([]byte(value), &d) != nil:
			loaded.Ignored[key] = "not a decision this release wrote"
		default:
			loaded.Decisions[Counterpart(key)] = d
		}
	}
	return loaded, nil
}

// isCounterpart is true for the name of a counterpart.
func isCounterpart(name string) bool {
	for _, c := range Counterparts {
		if string(c) == name {
			return true
		}
	}
	return false
}

// Save records d for c, beside what the record holds. A key that exists
// already is left as it is: the first decision stands.
func (r *Record) Save(ctx context.Context, c Counterpart, d Decision) error {
	value, err := json.Marshal(d)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, r.CallTimeout)
	defer cancel()
	configMaps := r.ConfigMaps.ConfigMaps(r.Namespace)
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: RecordName, Namespace: r.Namespace},
		Data:       map[string]string{string(c): string(value)},
	}
	_, err = configMaps.Create(ctx, cm, metav1.CreateOptions{FieldManager: recordFieldManager})
	if !apierrors.IsAlreadyExists(err) {
		if err != nil {
			return fmt.Errorf("writing %s: %w", r, err)
		}
		return nil
	}
	existing, err := configMaps.Get(ctx, RecordName, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading %s: %w", r, err)
	}
	if _, ok := existing.Data[string(c)]; ok || len(existing.Data) == 0 {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"data": cm.Data})
	if err != nil {
		return err
	}
	if _, err := configMaps.Patch(ctx, RecordName, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: recordFieldManager}); err != nil {
		return fmt.Errorf("writing %s: %w", r, err)
	}
	return nil
}
