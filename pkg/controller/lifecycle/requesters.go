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

package lifecycle

import (
	"cmp"
	"slices"

	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
)

// requesterEntry is one candidate for status.requesters: a request of the
// target, or a requester the status already lists whose request is gone.
type requesterEntry struct {
	requester lifecyclev1alpha1.Requester
	// exists is true for a request in the cache; deleting for one whose
	// deletion started.
	exists, deleting bool
	created          int64
}

// requesters aggregates status.requesters from the requests of the
// target: each requester once, with its intent; a request being deleted,
// or gone while the status still lists it, is Withdrawn. When there are
// more than the API allows, existing requests come first, then those not
// being deleted, those that want the eviction, the oldest, and by name,
// as in the upstream pull request.
func requesters(ev *lifecyclev1alpha1.Eviction, requests []*lifecyclev1alpha1.EvictionRequest) []lifecyclev1alpha1.Requester {
	entries := make([]requesterEntry, 0, len(requests)+len(ev.Status.Requesters))
	for _, er := range requests {
		intent := lifecyclev1alpha1.RequesterIntent(er.Spec.Intent)
		if er.DeletionTimestamp != nil {
			intent = lifecyclev1alpha1.RequesterIntentWithdrawn
		}
		entries = append(entries, requesterEntry{
			requester: lifecyclev1alpha1.Requester{Name: er.Spec.Requester, Intent: intent},
			exists:    true, deleting: er.DeletionTimestamp != nil, created: er.CreationTimestamp.Unix(),
		})
	}
	for _, r := range ev.Status.Requesters {
		entries = append(entries, requesterEntry{requester: lifecyclev1alpha1.Requester{Name: r.Name, Intent: lifecyclev1alpha1.RequesterIntentWithdrawn}})
	}
	slices.SortStableFunc(entries, func(a, b requesterEntry) int {
		return cmp.Or(
			compareTrueFirst(a.exists, b.exists),
			compareTrueFirst(!a.deleting, !b.deleting),
			compareTrueFirst(a.requester.Intent == lifecyclev1alpha1.RequesterIntentEviction, b.requester.Intent == lifecyclev1alpha1.RequesterIntentEviction),
			cmp.Compare(a.created, b.created),
			cmp.Compare(a.requester.Name, b.requester.Name),
		)
	})
	var out []lifecyclev1alpha1.Requester
	seen := map[string]bool{}
	for _, e := range entries {
		if len(out) == maxRequesters {
			break
		}
		if seen[e.requester.Name] {
			continue
		}
		seen[e.requester.Name] = true
		out = append(out, e.requester)
	}
	return out
}

func compareTrueFirst(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return -1
	}
	return 1
}
