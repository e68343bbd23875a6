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
	"strconv"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/api/participants"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
)

// ExplainOptions are the options of `kubectl evictionrequest explain`.
type ExplainOptions struct {
	*Options
	Pod string
	// Clock tells ages; the real clock when nil.
	Clock clock.PassiveClock
}

func newExplainCommand(o *Options) *cobra.Command {
	e := &ExplainOptions{Options: o}
	return &cobra.Command{
		Use:   "explain POD",
		Short: "Show a pod's participants, where each came from, and what an eviction would meet now",
		Long: `Show the participants of a pod's eviction (interceptors on coordination.k8s.io, responders on
lifecycle.k8s.io) in the order they take their turns, where each one came from (the pod's own
declaration, or the participant rule whose MutatingAdmissionPolicy added it at the pod's
creation), the rules that left the pod alone because it declares participants of its own, and what an eviction of the pod meets now: the request in progress and whose turn it
is, or whose turn would come first, and the PodDisruptionBudgets that would refuse the Eviction
API at the end.`,
		Example: `  # Why the pod web-0 waits for the surge interceptor before it goes
  kubectl evictionrequest explain -n shop web-0`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			e.Pod = args[0]
			if err := e.complete(); err != nil {
				return err
			}
			return e.Run(cmd.Context())
		},
	}
}

// explained is one participant of the pod, in the order of turns.
type explained struct {
	chainEntry
	// rule is the participant rule that added it, "" for the pod's own.
	rule string
}

// explanation is what explain reports of one pod.
type explanation struct {
	api          evictionapi.API
	pod          *corev1.Pod
	participants []explained
	// record is the pod's eviction, nil when none was requested.
	record *record
	pdbs   []*policyv1.PodDisruptionBudget
	// policies says, of each rule that added a participant, whether its
	// MutatingAdmissionPolicy exists; a rule the caller may not read the
	// policies of is left out.
	policies map[string]bool
	// leftAloneBy are the rules that select the pod but added it nothing
	// because it declares participants of its own.
	leftAloneBy []string
}

// Run prints the explanation of the pod.
func (e *ExplainOptions) Run(ctx context.Context) error {
	callCtx, cancel := e.call(ctx)
	pod, err := e.kube.CoreV1().Pods(e.namespace).Get(callCtx, e.Pod, metav1.GetOptions{})
	cancel()
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("pod %q not found in namespace %s", e.Pod, e.namespace)
	}
	if err != nil {
		return err
	}
	s := &StatusOptions{Options: e.Options, Clock: e.Clock}
	records, err := s.source().ofPods(ctx, map[types.UID]*corev1.Pod{pod.UID: pod})
	if err != nil {
		return err
	}
	x := explanation{api: e.api(), pod: pod, participants: participantsOf(e.api(), pod), pdbs: s.pdbsIn(ctx, pod.Namespace)}
	if len(records) > 0 {
		x.record = &records[len(records)-1]
	}
	x.policies = e.policiesOf(ctx, x.participants)
	x.leftAloneBy = e.leftAloneBy(ctx, pod)
	x.print(e.Out, s.now())
	return nil
}

// participantsOf lists the participants pod declares on api in the order
// they take their turns (on lifecycle.k8s.io, with the default evictor),
// with the rule that added each.
func participantsOf(api evictionapi.API, pod *corev1.Pod) []explained {
	addedBy := participants.AddedBy(pod.Annotations)
	var list []explained
	if api == evictionapi.Lifecycle {
		for _, r := range lifecycleutil.PodResponders(pod) {
			entry := chainEntry{Index: "-", Name: r.Name}
			if r.Priority != nil {
				entry.Index = strconv.Itoa(int(*r.Priority))
			}
			list = append(list, explained{chainEntry: entry, rule: addedBy[r.Name]})
		}
		return list
	}
	names := v1alpha1.PodInterceptorNames(pod.Annotations)
	for i := len(names) - 1; i >= 0; i-- {
		list = append(list, explained{chainEntry: chainEntry{Index: strconv.Itoa(i), Name: names[i]}, rule: addedBy[names[i]]})
	}
	return list
}

// policiesOf looks up the MutatingAdmissionPolicy of each rule that added
// a participant, once per rule.
func (e *ExplainOptions) policiesOf(ctx context.Context, list []explained) map[string]bool {
	policies := map[string]bool{}
	for _, p := range list {
		if _, seen := policies[p.rule]; p.rule == "" || seen {
			continue
		}
		callCtx, cancel := e.call(ctx)
		_, err := e.kube.AdmissionregistrationV1().MutatingAdmissionPolicies().Get(callCtx, participants.PolicyName(p.rule), metav1.GetOptions{})
		cancel()
		switch {
		case err == nil:
			policies[p.rule] = true
		case apierrors.IsNotFound(err):
			policies[p.rule] = false
		}
	}
	return policies
}

// isEvictor is true for lifecycle.k8s.io's default responder, which
// every pod has without declaring it.
func isEvictor(name string) bool {
	return name == lifecycleutil.Evictor
}
