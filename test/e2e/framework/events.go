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
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

// Events lists the events recorded on the object name of kind (any kind
// when empty) in namespace ns (all namespaces when empty, as for Nodes),
// oldest first.
func (f *Framework) Events(t testing.TB, ns, kind, name string) []corev1.Event {
	t.Helper()
	list, err := f.events(t.Context(), ns, kind, name)
	if err != nil {
		t.Fatal(err)
	}
	return list
}

func (f *Framework) events(ctx context.Context, ns, kind, name string) ([]corev1.Event, error) {
	selector := fields.OneTermEqualSelector("involvedObject.name", name)
	if kind != "" {
		selector = fields.AndSelectors(selector, fields.OneTermEqualSelector("involvedObject.kind", kind))
	}
	list, err := f.Kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: selector.String()})
	if err != nil {
		return nil, err
	}
	sort.SliceStable(list.Items, func(i, j int) bool {
		return list.Items[i].FirstTimestamp.Before(&list.Items[j].FirstTimestamp)
	})
	return list.Items, nil
}

// EventReasons lists the reasons of Events, oldest first.
func (f *Framework) EventReasons(t testing.TB, ns, kind, name string) []string {
	t.Helper()
	return reasons(f.Events(t, ns, kind, name))
}

// EventMessages joins the messages of the events with reason on the object
// name of kind (any kind when empty) in ns.
func (f *Framework) EventMessages(t testing.TB, ns, kind, name, reason string) string {
	t.Helper()
	var messages []string
	for _, e := range f.Events(t, ns, kind, name) {
		if e.Reason == reason {
			messages = append(messages, e.Message)
		}
	}
	return strings.Join(messages, "\n")
}

// WaitForEvents waits until the object name of kind (any kind when empty)
// in ns has events with every one of want as reason.
func (f *Framework) WaitForEvents(t testing.TB, ns, kind, name string, want ...string) {
	t.Helper()
	WaitFor(t, fmt.Sprintf("events %v on %s", want, name), func(ctx context.Context) ([]corev1.Event, error) {
		return f.events(ctx, ns, kind, name)
	}, func(events []corev1.Event) error {
		got := reasons(events)
		for _, r := range want {
			if !slices.Contains(got, r) {
				return fmt.Errorf("no %s event yet, have %v", r, got)
			}
		}
		return nil
	})
}

func reasons(events []corev1.Event) []string {
	reasons := make([]string, 0, len(events))
	for _, e := range events {
		reasons = append(reasons, e.Reason)
	}
	return reasons
}
