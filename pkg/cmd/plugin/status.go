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

package plugin

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/utils/clock"

	"github.com/evictionrequest/apiserver/pkg/drain"
)

// StatusOptions are the options of `kubectl evictionrequest status`.
type StatusOptions struct {
	*Options
	Pods          []string
	Node          string
	AllNamespaces bool
	// Events is how many of the latest events of each request to show.
	Events int
	// Clock tells ages; the real clock when nil.
	Clock clock.PassiveClock
}

func newStatusCommand(o *Options) *cobra.Command {
	s := &StatusOptions{Options: o, Events: 5}
	cmd := &cobra.Command{
		Use:   "status [POD... | --node NODE | -A]",
		Short: "Show where the eviction of pods stands",
		Long: `Show the EvictionRequests of the named pods, of the pods of a node, or of a namespace (all
namespaces with -A): the interceptor chain in the order it runs, which interceptors are done,
the active one with its heartbeat age, ETA and message, the requesters, failed evictions and the
PodDisruptionBudget that blocks them, and the latest events.`,
		Example: `  # Where the drain of a node stands
  kubectl evictionrequest status --node NODE

  # One pod
  kubectl evictionrequest status -n shop web-0`,
		RunE: func(cmd *cobra.Command, args []string) error {
			s.Pods = args
			if err := s.complete(); err != nil {
				return err
			}
			if err := s.Validate(); err != nil {
				return err
			}
			return s.Run(cmd.Context())
		},
	}
	cmd.Flags().StringVar(&s.Node, "node", "", "Show the EvictionRequests of the pods of this node.")
	cmd.Flags().BoolVarP(&s.AllNamespaces, "all-namespaces", "A", false, "Show the EvictionRequests of all namespaces.")
	cmd.Flags().IntVar(&s.Events, "events", s.Events, "Number of the latest events to show for each EvictionRequest.")
	return cmd
}

// Validate checks that one way of choosing requests is used.
func (s *StatusOptions) Validate() error {
	chosen := 0
	for _, set := range []bool{len(s.Pods) > 0, s.Node != "", s.AllNamespaces} {
		if set {
			chosen++
		}
	}
	if chosen > 1 {
		return fmt.Errorf("give pods, --node or --all-namespaces, not several")
	}
	if s.Events < 0 {
		return fmt.Errorf("--events must not be negative")
	}
	return nil
}

// statusEntry is one pod's eviction with what the report says of it.
type statusEntry struct {
	record
	pdbs   []*policyv1.PodDisruptionBudget
	events []corev1.Event
}

// Run prints the report.
func (s *StatusOptions) Run(ctx context.Context) error {
	records, err := s.choose(ctx)
	if err != nil {
		return err
	}
	if len(records) == 0 {
		fmt.Fprintln(s.Out, "No EvictionRequests found.")
		return nil
	}
	byNamespace := map[string][]record{}
	for _, r := range records {
		byNamespace[r.pod.Namespace] = append(byNamespace[r.pod.Namespace], r)
	}
	var entries []statusEntry
	for _, ns := range sortedKeys(keysOf(byNamespace)) {
		pdbs := s.pdbsIn(ctx, ns)
		events := s.eventsIn(ctx, ns)
		for _, r := range byNamespace[ns] {
			e := statusEntry{record: r, pdbs: pdbs}
			for _, object := range r.objects {
				e.events = append(e.events, events[object]...)
			}
			sort.SliceStable(e.events, func(i, j int) bool { return eventTime(e.events[i]).Before(eventTime(e.events[j])) })
			entries = append(entries, e)
		}
	}
	sort.Slice(entries, func(i, j int) bool {
		a, b := entries[i].pod, entries[j].pod
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	var now time.Time
	if s.Clock != nil {
		now = s.Clock.Now()
	} else {
		now = time.Now()
	}
	for i, e := range entries {
		if i > 0 {
			fmt.Fprintln(s.Out)
		}
		s.print(s.Out, e, now)
	}
	return nil
}

// choose finds the records to report: of the pods of a node, of the named
// pods (by name for a pod that is gone), or of a namespace.
func (s *StatusOptions) choose(ctx context.Context) ([]record, error) {
	source := s.source()
	switch {
	case s.Node != "":
		pods, err := s.podsOfNode(ctx)
		if err != nil {
			return nil, err
		}
		return source.ofPods(ctx, pods)
	case len(s.Pods) > 0:
		return s.ofNamedPods(ctx, source)
	}
	namespace := s.namespace
	if s.AllNamespaces {
		namespace = metav1.NamespaceAll
	}
	podList, err := s.listPods(ctx, namespace, "")
	if err != nil {
		return nil, err
	}
	return source.inNamespace(ctx, namespace, byUID(podList))
}

// podsOfNode lists the pods of --node by UID.
func (s *StatusOptions) podsOfNode(ctx context.Context) (map[types.UID]*corev1.Pod, error) {
	callCtx, cancel := s.call(ctx)
	_, err := s.kube.CoreV1().Nodes().Get(callCtx, s.Node, metav1.GetOptions{})
	cancel()
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("node %q not found", s.Node)
	}
	if err != nil {
		return nil, err
	}
	list, err := s.listPods(ctx, metav1.NamespaceAll, fields.OneTermEqualSelector("spec.nodeName", s.Node).String())
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("node %s has no pods", s.Node)
	}
	pods := map[types.UID]*corev1.Pod{}
	for _, pod := range list {
		if pod.Spec.NodeName == s.Node {
			pods[pod.UID] = pod
		}
	}
	return pods, nil
}

// ofNamedPods finds the records of the named pods: by UID for the pods that
// exist, by name for those that are gone.
func (s *StatusOptions) ofNamedPods(ctx context.Context, source statusSource) ([]record, error) {
	pods := map[types.UID]*corev1.Pod{}
	var records []record
	for _, name := range s.Pods {
		callCtx, cancel := s.call(ctx)
		pod, err := s.kube.CoreV1().Pods(s.namespace).Get(callCtx, name, metav1.GetOptions{})
		cancel()
		switch {
		case err == nil:
			pods[pod.UID] = pod
			continue
		case !apierrors.IsNotFound(err):
			return nil, err
		}
		found, err := source.ofPodName(ctx, s.namespace, name)
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("pod %q not found in namespace %s, and no EvictionRequest targets it", name, s.namespace)
		}
		records = append(records, found...)
	}
	if len(pods) == 0 {
		return records, nil
	}
	found, err := source.ofPods(ctx, pods)
	if err != nil {
		return nil, err
	}
	for _, pod := range pods {
		if !hasRecordOf(found, pod.UID) {
			return nil, fmt.Errorf("pod %s/%s has no EvictionRequest", pod.Namespace, pod.Name)
		}
	}
	return append(records, found...), nil
}

func hasRecordOf(records []record, uid types.UID) bool {
	for _, r := range records {
		if r.uid == uid {
			return true
		}
	}
	return false
}

// byUID indexes pods by UID.
func byUID(list []*corev1.Pod) map[types.UID]*corev1.Pod {
	pods := make(map[types.UID]*corev1.Pod, len(list))
	for _, pod := range list {
		pods[pod.UID] = pod
	}
	return pods
}

func (s *StatusOptions) listPods(ctx context.Context, namespace, fieldSelector string) ([]*corev1.Pod, error) {
	callCtx, cancel := s.call(ctx)
	defer cancel()
	list, err := s.kube.CoreV1().Pods(namespace).List(callCtx, metav1.ListOptions{FieldSelector: fieldSelector})
	if err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	pods := make([]*corev1.Pod, 0, len(list.Items))
	for i := range list.Items {
		pods = append(pods, &list.Items[i])
	}
	return pods, nil
}

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
