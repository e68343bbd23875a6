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

package app

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/evictionrequest/apiserver/pkg/drain"
)

// pdbsIn lists the PodDisruptionBudgets of a namespace; without permission
// the report names no budget.
func (s *StatusOptions) pdbsIn(ctx context.Context, namespace string) []*policyv1.PodDisruptionBudget {
	callCtx, cancel := s.call(ctx)
	defer cancel()
	list, err := s.kube.PolicyV1().PodDisruptionBudgets(namespace).List(callCtx, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	pdbs := make([]*policyv1.PodDisruptionBudget, 0, len(list.Items))
	for i := range list.Items {
		pdbs = append(pdbs, &list.Items[i])
	}
	return pdbs
}

// eventsIn lists the events on the source's objects in a namespace by
// object name; without permission the report shows none.
func (s *StatusOptions) eventsIn(ctx context.Context, namespace string) map[string][]corev1.Event {
	if s.Events == 0 {
		return nil
	}
	callCtx, cancel := s.call(ctx)
	defer cancel()
	events := map[string][]corev1.Event{}
	for _, kind := range s.source().eventKinds() {
		list, err := s.kube.CoreV1().Events(namespace).List(callCtx, metav1.ListOptions{
			FieldSelector: fields.OneTermEqualSelector("involvedObject.kind", kind).String(),
		})
		if err != nil {
			return nil
		}
		for _, e := range list.Items {
			key := kind + "/" + e.InvolvedObject.Name
			events[key] = append(events[key], e)
		}
	}
	return events
}

func eventTime(e corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.FirstTimestamp.Time
}

// print writes the report of one pod's eviction.
func (s *StatusOptions) print(out io.Writer, e statusEntry, now time.Time) {
	progress := drain.Progress(e.pod, e.uid, e.target, e.request, e.pdbs)
	w := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	node := "-"
	if e.target != nil {
		node = e.target.Spec.NodeName
	}
	fmt.Fprintf(w, "%s:\t%s\n", e.kind, e.name)
	fmt.Fprintf(w, "Pod:\t%s (node %s)\n", e.pod.Name, node)
	state := string(progress.State)
	if e.state != "" {
		state = e.state
	}
	fmt.Fprintf(w, "State:\t%s\n", state)
	fmt.Fprintf(w, "Requesters:\t%s\n", orNone(strings.Join(e.requesters, ", ")))
	if len(e.chain) == 0 {
		fmt.Fprintf(w, "%s:\t%s\n", e.chainTitle, e.noChain)
	} else {
		fmt.Fprintf(w, "%s:\t(in the order they run%s)\n", e.chainTitle, e.chainOrder)
		for _, c := range e.chain {
			line := fmt.Sprintf("  [%s] %s\t%s", c.Index, c.Name, c.Turn)
			if c.Turn == "active" {
				heartbeat := "none yet"
				if progress.Request.LastHeartbeat != nil {
					heartbeat = drain.Ago(now, progress.Request.LastHeartbeat)
				}
				line += fmt.Sprintf(", heartbeat %s, ETA %s", heartbeat, drain.ETA(now, progress.Request.ExpectedFinish))
			}
			fmt.Fprintln(w, line)
		}
	}
	fmt.Fprintf(w, "Message:\t%s\n", orNone(drain.Truncate(e.request.Message, 300)))
	for _, field := range e.extra {
		fmt.Fprintf(w, "%s:\t%s\n", field[0], field[1])
	}
	evictions := fmt.Sprintf("%d failed", progress.Request.FailedEvictions)
	if len(progress.BlockingPDBs) > 0 {
		evictions += "; blocked by PodDisruptionBudget " + strings.Join(progress.BlockingPDBs, ", ")
	}
	fmt.Fprintf(w, "Evictions:\t%s\n", evictions)
	fmt.Fprintf(w, "Age:\t%s\n", duration.HumanDuration(now.Sub(e.created)))
	_ = w.Flush()
	s.printEvents(out, e.events, now)
}

// printEvents writes the latest --events events, oldest first.
func (s *StatusOptions) printEvents(out io.Writer, events []corev1.Event, now time.Time) {
	if s.Events == 0 {
		return
	}
	if len(events) > s.Events {
		events = events[len(events)-s.Events:]
	}
	if len(events) == 0 {
		fmt.Fprintln(out, "Events:  <none>")
		return
	}
	fmt.Fprintln(out, "Events:")
	w := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	for _, ev := range events {
		fmt.Fprintf(w, "  %s\t%s\t%s\t%s\n", duration.HumanDuration(now.Sub(eventTime(ev))), ev.Type, ev.Reason, drain.Truncate(ev.Message, 160))
	}
	_ = w.Flush()
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func keysOf[V any](m map[string]V) map[string]bool {
	keys := make(map[string]bool, len(m))
	for k := range m {
		keys[k] = true
	}
	return keys
}
