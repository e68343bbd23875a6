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

package drain

import (
	"fmt"
	"sort"
	"strings"
)

// Summary counts the pods of a drain by state.
type Summary struct {
	// Total counts the pods the drain evicts; Done those of them with
	// nothing left to do (PodProgress.Done).
	Total, Done int
	// Completing counts the pods gone whose request is not complete yet.
	Completing                                            int
	Intercepted, Evicting, Terminating, Pending, Canceled int
	// Blocked counts the blocked pods by the PodDisruptionBudget that
	// blocks them; "" counts those no budget explains.
	Blocked map[string]int
	// Escalated counts the pods not done that the drain escalated past
	// its deadline (they are counted by state too).
	Escalated int
}

// Summarize counts progress by state.
func Summarize(progress []PodProgress) Summary {
	s := Summary{Total: len(progress), Blocked: map[string]int{}}
	for _, p := range progress {
		if p.Escalation != "" && !p.Done() {
			s.Escalated++
		}
		switch {
		case p.Done():
			s.Done++
		case p.State == StateGone:
			s.Completing++
		case p.State == StateIntercepted:
			s.Intercepted++
		case p.State == StateEvicting:
			s.Evicting++
		case p.State == StateTerminating:
			s.Terminating++
		case p.State == StatePending:
			s.Pending++
		case p.State == StateCanceled:
			s.Canceled++
		case p.State == StateBlocked:
			s.Blocked[strings.Join(p.BlockingPDBs, ",")]++
		}
	}
	return s
}

// Drained is true once every pod the drain evicts is done.
func (s Summary) Drained() bool {
	return s.Done == s.Total
}

// Left is the number of pods that are not done.
func (s Summary) Left() int {
	return s.Total - s.Done
}

// String is the one-line summary of a drain, for example
// "12/40 pods gone, 3 intercepted, 1 blocked by PodDisruptionBudget web".
func (s Summary) String() string {
	summary := fmt.Sprintf("%d/%s gone", s.Done, Pods(s.Total))
	if rest := s.Breakdown(); rest != "" {
		summary += ", " + rest
	}
	return summary
}

// Breakdown counts the pods that are not done by state, for example
// "3 intercepted, 1 blocked by PodDisruptionBudget web"; empty when none is left.
func (s Summary) Breakdown() string {
	var parts []string
	add := func(n int, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, what))
		}
	}
	add(s.Intercepted, "intercepted")
	add(s.Evicting, "evicting")
	add(s.Terminating, "terminating")
	add(s.Completing, "completing")
	add(s.Pending, "pending")
	add(s.Canceled, "canceled")
	pdbs := make([]string, 0, len(s.Blocked))
	for pdb := range s.Blocked {
		pdbs = append(pdbs, pdb)
	}
	sort.Strings(pdbs)
	for _, pdb := range pdbs {
		if pdb == "" {
			add(s.Blocked[pdb], "blocked by a refused eviction")
		} else {
			add(s.Blocked[pdb], "blocked by PodDisruptionBudget "+pdb)
		}
	}
	add(s.Escalated, "escalated past the deadline")
	return strings.Join(parts, ", ")
}
