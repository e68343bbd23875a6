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
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
)

// RecordName is the name of the ConfigMap that records, in the namespace of
// evictionrequest-controller's Lease, that its controllers stepped aside.
const RecordName = "evictionrequest-controller-stepped-aside"

// Keys of the record's data.
const (
	recordManager = "fieldManager"
	recordObject  = "object"
	recordWritten = "written"
)

// Decision is why the controllers stepped aside: the write of another
// controller's that showed it runs.
type Decision struct {
	// Manager is the field manager of the write.
	Manager string
	// Object is the written object, as kind namespace/name.
	Object string
	// Written is when it was written.
	Written time.Time
}

// Record keeps the decision to step aside across restarts and leadership
// terms: kube-controller-manager's controllers write only when something
// changes, so a process that restarted beside them would otherwise act, on
// the Evictions in progress and on the next one, before seeing them write
// again. Only an admin takes the decision back, by deleting the ConfigMap.
type Record struct {
	// ConfigMaps is where the record is kept.
	ConfigMaps typedcorev1.ConfigMapsGetter
	// Namespace is the namespace of the record (the Lease's).
	Namespace string
	// CallTimeout bounds each call to kube-apiserver.
	CallTimeout time.Duration
}

// String names the record as kubectl does, for logs and messages.
func (r *Record) String() string {
	return fmt.Sprintf("configmap/%s -n %s", RecordName, r.Namespace)
}

// Load returns the decision recorded, nil when there is none.
func (r *Record) Load(ctx context.Context) (*Decision, error) {
	ctx, cancel := context.WithTimeout(ctx, r.CallTimeout)
	defer cancel()
	cm, err := r.ConfigMaps.ConfigMaps(r.Namespace).Get(ctx, RecordName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", r, err)
	}
	// A record an admin wrote by hand, without the keys, still counts: it
	// exists, and says to step aside.
	d := &Decision{Manager: cm.Data[recordManager], Object: cm.Data[recordObject]}
	d.Written, _ = time.Parse(time.RFC3339, cm.Data[recordWritten])
	return d, nil
}

// Save records d. A record that exists already says the same.
func (r *Record) Save(ctx context.Context, d Decision) error {
	ctx, cancel := context.WithTimeout(ctx, r.CallTimeout)
	defer cancel()
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: RecordName, Namespace: r.Namespace},
		Data: map[string]string{
			recordManager: d.Manager,
			recordObject:  d.Object,
			recordWritten: d.Written.UTC().Format(time.RFC3339),
		},
	}
	_, err := r.ConfigMaps.ConfigMaps(r.Namespace).Create(ctx, cm, metav1.CreateOptions{FieldManager: "evictionrequest.github.io/step-aside-guard"})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("writing %s: %w", r, err)
	}
	return nil
}
