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
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/evictionrequest/apiserver/pkg/api/participants"
	"github.com/evictionrequest/apiserver/pkg/drain"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
)

// print writes the explanation: the participants aligned among
// themselves, between the lines about the pod.
func (x explanation) print(out io.Writer, now time.Time) {
	node := x.pod.Spec.NodeName
	if node == "" {
		node = "-"
	}
	title, order := "Interceptors", "highest index first"
	if x.api == evictionapi.Lifecycle {
		title, order = "Responders", "highest priority first"
	}
	fmt.Fprintf(out, "Pod: %s/%s (node %s)\n", x.pod.Namespace, x.pod.Name, node)
	if len(x.participants) == 0 {
		fmt.Fprintf(out, "%s: <none>: an eviction goes to the Eviction API at once\n", title)
	} else {
		fmt.Fprintf(out, "%s: (%s, in the order they run, %s)\n", title, x.api, order)
		w := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
		turns := x.turns()
		for _, p := range x.participants {
			line := fmt.Sprintf("  [%s] %s\t%s", p.Index, p.Name, x.source(p))
			if turn := turns[p.Name]; turn != "" {
				line += "\t" + turn
			}
			fmt.Fprintln(w, line)
		}
		if x.api == evictionapi.Coordination {
			fmt.Fprintln(w, "  then\tthe controller evicts the pod through the Eviction API")
		}
		_ = w.Flush()
	}
	for _, rule := range x.leftAloneBy {
		fmt.Fprintf(out, "Left alone by the rule %s (MutatingAdmissionPolicy %s): the pod declares participants of its own (skipPodsWithOwnParticipants)\n",
			rule, participants.PolicyName(rule))
	}
	fmt.Fprintf(out, "Eviction: %s\n", x.eviction(now))
	fmt.Fprintf(out, "Disruption budgets: %s\n", x.budgets())
}

// source says where participant p came from.
func (x explanation) source(p explained) string {
	switch {
	case p.rule != "":
		text := fmt.Sprintf("added by the rule %s (MutatingAdmissionPolicy %s)", p.rule, participants.PolicyName(p.rule))
		if exists, known := x.policies[p.rule]; known && !exists {
			text += "; that policy is gone"
		}
		return text
	case isEvictor(p.Name):
		return "Kubernetes' default: evicts the pod through the Eviction API"
	case x.api == evictionapi.Lifecycle:
		return "the pod's spec.evictionResponders"
	}
	return "the pod's evictionrequest.coordination.k8s.io/interceptors annotation"
}

// turns are where each participant's turn stands in the eviction in
// progress; empty when there is none.
func (x explanation) turns() map[string]string {
	turns := map[string]string{}
	if x.record == nil || x.record.request.Complete {
		return turns
	}
	for _, c := range x.record.chain {
		turns[c.Name] = c.Turn
	}
	return turns
}

// eviction says what an eviction of the pod meets now.
func (x explanation) eviction(now time.Time) string {
	r := x.record
	if r == nil || r.request.Complete {
		text := "none in progress"
		if r != nil {
			text = fmt.Sprintf("%s %s ended (%s)", r.kind, r.name, r.request.Message)
		}
		if len(x.participants) == 0 {
			return text + "; one requested now goes to the Eviction API at once"
		}
		return fmt.Sprintf("%s; one requested now starts with the turn of %s", text, x.participants[0].Name)
	}
	progress := drain.Progress(r.pod, r.uid, r.target, r.request, x.pdbs)
	text := fmt.Sprintf("%s %s: %s", r.kind, r.name, progress.State)
	if active := r.request.ActiveInterceptor; active != "" && !r.request.InterceptorDone {
		heartbeat := "none yet"
		if r.request.LastHeartbeat != nil {
			heartbeat = drain.Ago(now, r.request.LastHeartbeat)
		}
		text += fmt.Sprintf(", the turn of %s (heartbeat %s)", active, heartbeat)
	}
	if r.request.Message != "" {
		text += ": " + drain.Truncate(r.request.Message, 300)
	}
	return text
}

// budgets names the PodDisruptionBudgets that select the pod, with the
// disruptions each allows, and those that would refuse the Eviction API now.
func (x explanation) budgets() string {
	var selecting []string
	for _, pdb := range x.pdbs {
		selector, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if pdb.Namespace != x.pod.Namespace || err != nil || !selector.Matches(labels.Set(x.pod.Labels)) {
			continue
		}
		selecting = append(selecting, fmt.Sprintf("%s (%d disruptions allowed)", pdb.Name, pdb.Status.DisruptionsAllowed))
	}
	if len(selecting) == 0 {
		return "<none> select the pod"
	}
	text := strings.Join(selecting, ", ")
	if blocking := drain.BlockingPDBs(x.pod, x.pdbs); len(blocking) > 0 {
		text += fmt.Sprintf("; the Eviction API refuses (429) while %s allow none", strings.Join(blocking, ", "))
	}
	return text
}
