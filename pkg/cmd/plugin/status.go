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

	erutil "github.com/evictionrequest/apiserver/pkg/api/v1alpha1/evictionrequest"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
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
  kubectl evictionrequest status --node kwok-node-0

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

// statusEntry is one EvictionRequest with what the report says of it.
type statusEntry struct {
	er     *v1alpha1.EvictionRequest
	pod    *corev1.Pod
	pdbs   []*policyv1.PodDisruptionBudget
	events []corev1.Event
}

// Run prints the report.
func (s *StatusOptions) Run(ctx context.Context) error {
	requests, pods, err := s.choose(ctx)
	if err != nil {
		return err
	}
	if len(requests) == 0 {
		fmt.Fprintln(s.Out, "No EvictionRequests found.")
		return nil
	}
	byNamespace := map[string][]*v1alpha1.EvictionRequest{}
	for _, er := range requests {
		byNamespace[er.Namespace] = append(byNamespace[er.Namespace], er)
	}
	var entries []statusEntry
	for _, ns := range sortedKeys(keysOf(byNamespace)) {
		pdbs := s.pdbsIn(ctx, ns)
		events := s.eventsIn(ctx, ns)
		for _, er := range byNamespace[ns] {
			entries = append(entries, statusEntry{er: er, pod: pods[types.UID(er.Name)], pdbs: pdbs, events: events[er.Name]})
		}
	}
	sort.Slice(entries, func(i, j int) bool {
		a, b := entries[i].er, entries[j].er
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return erutil.PodName(a) < erutil.PodName(b)
	})
	now := time.Now()
	for i, e := range entries {
		if i > 0 {
			fmt.Fprintln(s.Out)
		}
		s.print(s.Out, e, now)
	}
	return nil
}

// choose finds the requests to report, with the pods they target by UID.
func (s *StatusOptions) choose(ctx context.Context) ([]*v1alpha1.EvictionRequest, map[types.UID]*corev1.Pod, error) {
	pods := map[types.UID]*corev1.Pod{}
	switch {
	case s.Node != "":
		callCtx, cancel := s.call(ctx)
		_, err := s.kube.CoreV1().Nodes().Get(callCtx, s.Node, metav1.GetOptions{})
		cancel()
		if apierrors.IsNotFound(err) {
			return nil, nil, fmt.Errorf("node %q not found", s.Node)
		}
		if err != nil {
			return nil, nil, err
		}
		list, err := s.listPods(ctx, metav1.NamespaceAll, fields.OneTermEqualSelector("spec.nodeName", s.Node).String())
		if err != nil {
			return nil, nil, err
		}
		if len(list) == 0 {
			return nil, nil, fmt.Errorf("node %s has no pods", s.Node)
		}
		for _, pod := range list {
			if pod.Spec.NodeName == s.Node {
				pods[pod.UID] = pod
			}
		}
		requests, err := s.requestsOfPods(ctx, pods)
		if err != nil {
			return nil, nil, err
		}
		return requests, pods, nil
	case len(s.Pods) > 0:
		var requests []*v1alpha1.EvictionRequest
		for _, name := range s.Pods {
			found, err := s.requestsOfPod(ctx, name, pods)
			if err != nil {
				return nil, nil, err
			}
			requests = append(requests, found...)
		}
		return requests, pods, nil
	}
	namespace := s.namespace
	if s.AllNamespaces {
		namespace = metav1.NamespaceAll
	}
	callCtx, cancel := s.call(ctx)
	list, err := s.evr.CoordinationV1alpha1().EvictionRequests(namespace).List(callCtx, metav1.ListOptions{})
	cancel()
	if err != nil {
		return nil, nil, err
	}
	podList, err := s.listPods(ctx, namespace, "")
	if err != nil {
		return nil, nil, err
	}
	for _, pod := range podList {
		pods[pod.UID] = pod
	}
	requests := make([]*v1alpha1.EvictionRequest, 0, len(list.Items))
	for i := range list.Items {
		requests = append(requests, &list.Items[i])
	}
	return requests, pods, nil
}

// requestsOfPods finds the requests of pods with one LIST of
// EvictionRequests per namespace of the pods: each is named after its pod's
// UID.
func (s *StatusOptions) requestsOfPods(ctx context.Context, pods map[types.UID]*corev1.Pod) ([]*v1alpha1.EvictionRequest, error) {
	namespaces := map[string]bool{}
	for _, pod := range pods {
		namespaces[pod.Namespace] = true
	}
	var requests []*v1alpha1.EvictionRequest
	for _, ns := range sortedKeys(namespaces) {
		callCtx, cancel := s.call(ctx)
		list, err := s.evr.CoordinationV1alpha1().EvictionRequests(ns).List(callCtx, metav1.ListOptions{})
		cancel()
		if err != nil {
			return nil, err
		}
		for i := range list.Items {
			if pod := pods[types.UID(list.Items[i].Name)]; pod != nil && pod.Namespace == ns {
				requests = append(requests, &list.Items[i])
			}
		}
	}
	return requests, nil
}

// requestsOfPod finds the request of a pod by the pod's UID, or, for a pod
// that is gone, the requests that target its name.
func (s *StatusOptions) requestsOfPod(ctx context.Context, name string, pods map[types.UID]*corev1.Pod) ([]*v1alpha1.EvictionRequest, error) {
	callCtx, cancel := s.call(ctx)
	pod, err := s.kube.CoreV1().Pods(s.namespace).Get(callCtx, name, metav1.GetOptions{})
	cancel()
	switch {
	case err == nil:
		pods[pod.UID] = pod
		er, err := s.getRequest(ctx, s.namespace, string(pod.UID))
		if err != nil || er == nil {
			if err == nil {
				err = fmt.Errorf("pod %s/%s has no EvictionRequest", s.namespace, name)
			}
			return nil, err
		}
		return []*v1alpha1.EvictionRequest{er}, nil
	case !apierrors.IsNotFound(err):
		return nil, err
	}
	callCtx, cancel = s.call(ctx)
	list, err := s.evr.CoordinationV1alpha1().EvictionRequests(s.namespace).List(callCtx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector(v1alpha1.PodNameField, name).String(),
	})
	cancel()
	if err != nil {
		return nil, err
	}
	if len(list.Items) == 0 {
		return nil, fmt.Errorf("pod %q not found in namespace %s, and no EvictionRequest targets it", name, s.namespace)
	}
	requests := make([]*v1alpha1.EvictionRequest, 0, len(list.Items))
	for i := range list.Items {
		requests = append(requests, &list.Items[i])
	}
	return requests, nil
}

func (s *StatusOptions) getRequest(ctx context.Context, namespace, name string) (*v1alpha1.EvictionRequest, error) {
	callCtx, cancel := s.call(ctx)
	defer cancel()
	er, err := s.evr.CoordinationV1alpha1().EvictionRequests(namespace).Get(callCtx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return er, err
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

// eventsIn lists the events on EvictionRequests of a namespace by request
// name, oldest first; without permission the report shows none.
func (s *StatusOptions) eventsIn(ctx context.Context, namespace string) map[string][]corev1.Event {
	if s.Events == 0 {
		return nil
	}
	callCtx, cancel := s.call(ctx)
	defer cancel()
	list, err := s.kube.CoreV1().Events(namespace).List(callCtx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("involvedObject.kind", "EvictionRequest").String(),
	})
	if err != nil {
		return nil
	}
	events := map[string][]corev1.Event{}
	for _, e := range list.Items {
		events[e.InvolvedObject.Name] = append(events[e.InvolvedObject.Name], e)
	}
	for name := range events {
		sort.SliceStable(events[name], func(i, j int) bool { return eventTime(events[name][i]).Before(eventTime(events[name][j])) })
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

// print writes the report of one request.
func (s *StatusOptions) print(out io.Writer, e statusEntry, now time.Time) {
	er := e.er
	ref := types.NamespacedName{Namespace: er.Namespace, Name: erutil.PodName(er)}
	progress := drain.Progress(ref, types.UID(er.Name), e.pod, drain.EvictionRequestStatus(er, s.requester.Name()), e.pdbs)
	w := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	node := "-"
	if e.pod != nil {
		node = e.pod.Spec.NodeName
	}
	fmt.Fprintf(w, "EvictionRequest:\t%s/%s\n", er.Namespace, er.Name)
	fmt.Fprintf(w, "Pod:\t%s (node %s)\n", ref.Name, node)
	state := string(progress.State)
	if reason := erutil.CompletionReason(er); reason != "" {
		state = fmt.Sprintf("Complete (%s)", reason)
	}
	fmt.Fprintf(w, "State:\t%s\n", state)
	fmt.Fprintf(w, "Requesters:\t%s\n", orNone(strings.Join(erutil.RequesterNames(er), ", ")))
	if len(er.Spec.Interceptors) == 0 {
		fmt.Fprintf(w, "Interceptors:\t<none>: the controller evicts the pod through the Eviction API\n")
	} else {
		fmt.Fprintf(w, "Interceptors:\t(in the order they run, highest index first)\n")
		for _, c := range interceptorChain(er) {
			line := fmt.Sprintf("  [%d] %s\t%s", c.Index, c.Name, c.Turn)
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
	fmt.Fprintf(w, "Message:\t%s\n", orNone(drain.Truncate(er.Status.Message, 300)))
	fmt.Fprintf(w, "Cancellation policy:\t%s\n", erutil.CancellationPolicy(er))
	evictions := fmt.Sprintf("%d failed", progress.Request.FailedEvictions)
	if len(progress.BlockingPDBs) > 0 {
		evictions += "; blocked by PodDisruptionBudget " + strings.Join(progress.BlockingPDBs, ", ")
	}
	fmt.Fprintf(w, "Evictions:\t%s\n", evictions)
	fmt.Fprintf(w, "Age:\t%s\n", duration.HumanDuration(now.Sub(er.CreationTimestamp.Time)))
	_ = w.Flush()
	if s.Events == 0 {
		return
	}
	events := e.events
	if len(events) > s.Events {
		events = events[len(events)-s.Events:]
	}
	if len(events) == 0 {
		fmt.Fprintln(out, "Events:  <none>")
		return
	}
	fmt.Fprintln(out, "Events:")
	w = tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
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
