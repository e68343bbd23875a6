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
	"fmt"
	"strings"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/drain"
)

// ago says how long before now t was, as kubectl prints ages.
func ago(now time.Time, t *time.Time) string {
	if t == nil {
		return "-"
	}
	return duration.HumanDuration(now.Sub(*t)) + " ago"
}

// eta says when t comes, relative to now.
func eta(now time.Time, t *time.Time) string {
	if t == nil {
		return "-"
	}
	if d := t.Sub(now); d > 0 {
		return "in " + duration.HumanDuration(d)
	}
	return "overdue by " + duration.HumanDuration(now.Sub(*t))
}

// truncate shortens s to n runes, on one line.
func truncate(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// blocker says in one line what a pod that is not gone waits for.
func blocker(p drain.PodProgress, now time.Time) string {
	switch p.State {
	case drain.StateIntercepted:
		heartbeat := "no heartbeat yet"
		if p.LastHeartbeat != nil {
			heartbeat = "last heartbeat " + ago(now, p.LastHeartbeat)
		}
		s := fmt.Sprintf("interceptor %s is active, %s", p.ActiveInterceptor, heartbeat)
		if p.ExpectedFinish != nil {
			s += ", expects to finish " + eta(now, p.ExpectedFinish)
		}
		return s
	case drain.StateBlocked:
		if len(p.BlockingPDBs) > 0 {
			return fmt.Sprintf("the eviction was refused %s: PodDisruptionBudget %s allows no disruption", times(p.FailedEvictions), strings.Join(p.BlockingPDBs, ", "))
		}
		return fmt.Sprintf("the eviction was refused %s", times(p.FailedEvictions))
	case drain.StateEvicting:
		return "being evicted through the Eviction API"
	case drain.StateTerminating:
		return "terminating"
	case drain.StateCanceled:
		return "its EvictionRequest was canceled"
	case drain.StateGone:
		return "gone"
	}
	return "waiting for the eviction request controller"
}

// chainEntry is one interceptor of a request, in the order they run.
type chainEntry struct {
	Index int
	Name  string
	// Turn is done, active, completed (active and finished its part) or waiting.
	Turn string
}

// interceptorChain lists the interceptors of er highest index first, the
// order they run in, with where each one's turn stands.
func interceptorChain(er *v1alpha1.EvictionRequest) []chainEntry {
	active := -1
	name := ptr.Deref(er.Status.ActiveInterceptorName, "")
	for i := range er.Spec.Interceptors {
		if er.Spec.Interceptors[i].Name == name {
			active = i
		}
	}
	complete := isComplete(er)
	chain := make([]chainEntry, 0, len(er.Spec.Interceptors))
	for i := len(er.Spec.Interceptors) - 1; i >= 0; i-- {
		entry := chainEntry{Index: i, Name: er.Spec.Interceptors[i].Name, Turn: "waiting"}
		switch {
		case complete:
			entry.Turn = "-"
		case active < 0:
		case i > active:
			entry.Turn = "done"
		case i == active && er.Status.ActiveInterceptorCompleted:
			entry.Turn = "completed"
		case i == active:
			entry.Turn = "active"
		}
		chain = append(chain, entry)
	}
	return chain
}

func isComplete(er *v1alpha1.EvictionRequest) bool {
	return apimeta.IsStatusConditionTrue(er.Status.Conditions, string(v1alpha1.EvictionRequestComplete))
}

func times(n int32) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}
