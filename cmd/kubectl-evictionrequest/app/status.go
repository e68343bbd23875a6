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
	"sort"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/utils/clock"
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

// now is the time of the report.
func (s *StatusOptions) now() time.Time {
	if s.Clock != nil {
		return s.Clock.Now()
	}
	return time.Now()
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
	now := s.now()
	for i, e := range entries {
		if i > 0 {
			fmt.Fprintln(s.Out)
		}
		s.print(s.Out, e, now)
	}
	return nil
}
