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

// Package participants names what the participant rules of the chart
// (docs/participants.md) leave on the cluster: a MutatingAdmissionPolicy
// per rule, and on each pod a rule gave participants, a mark naming them.
package participants

import (
	"sort"
	"strings"
)

const (
	// PolicyPrefix starts the name of the MutatingAdmissionPolicy (and of
	// its binding) of every rule: PolicyPrefix + the rule's name.
	PolicyPrefix = "evictionrequest-participants-"
	// MarkPrefix starts the annotation a rule leaves on a pod it gave
	// participants: MarkPrefix + the rule's name, whose value lists, comma
	// separated, the interceptors and responders the rule added.
	MarkPrefix = "participants.evictionrequest.coordination.k8s.io/"
)

// PolicyName is the name of the MutatingAdmissionPolicy of the rule named
// rule.
func PolicyName(rule string) string {
	return PolicyPrefix + rule
}

// AddedBy maps each participant the annotations of a pod say a rule added
// to the rule's name. The marks inform: the pod's creator can write them
// as any annotation, and what takes part is what the pod declares.
func AddedBy(annotations map[string]string) map[string]string {
	added := map[string]string{}
	keys := make([]string, 0, len(annotations))
	for key := range annotations {
		if strings.HasPrefix(key, MarkPrefix) {
			keys = append(keys, key)
		}
	}
	// Two rules that name one participant: the first by name says.
	sort.Sort(sort.Reverse(sort.StringSlice(keys)))
	for _, key := range keys {
		rule := strings.TrimPrefix(key, MarkPrefix)
		for name := range strings.SplitSeq(annotations[key], ",") {
			if name = strings.TrimSpace(name); name != "" {
				added[name] = rule
			}
		}
	}
	return added
}
