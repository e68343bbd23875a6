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
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	"k8s.io/utils/ptr"

	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/controller/eviction"
	"github.com/evictionrequest/apiserver/pkg/util/podlookup"
)

// kube-apiserver 1.37 lets every writer of evictions/status write what the
// controller writes: it checks that the responders' states move in order
// and that their times are near its clock, not who moves them. Whoever a
// cluster grants evictions/status (every responder) can so set an
// Eviction's conditions and, first to write an Eviction's status, choose its
// responders and fill in the entries of responders whose turn has not come.
// The controller takes from an Eviction only what it can check against the
// pod: that it was evicted, and who its responders are.

// credibleEvictions are evictions without those that say their pod was
// evicted while the pod still runs: the controller sets TargetEvicted only
// once the pod is gone or terminal, and a request reports it only then, so
// that no writer of an Eviction's status ends the requests of a running
// pod. Such an Eviction counts as failed: while a request wants the
// eviction, a new Eviction starts. evictions are those of one target,
// whose pod is looked up once.
func (c *Controller) credibleEvictions(ctx context.Context, evictions []*lifecyclev1alpha1.Eviction) ([]*lifecyclev1alpha1.Eviction, error) {
	credible := make([]*lifecyclev1alpha1.Eviction, 0, len(evictions))
	var runs *bool
	for _, ev := range evictions {
		if lifecycleutil.IsEvicted(ev) {
			if runs == nil {
				r, err := c.podRuns(ctx, ev)
				if err != nil {
					return nil, err
				}
				runs = &r
			}
			if *runs {
				continue
			}
		}
		credible = append(credible, ev)
	}
	return credible, nil
}

// podRuns is true while ev's pod is neither gone nor terminal. A pod the
// cache has running is read live: the pod cache can be behind the
// Eviction cache (a new term lists them at different versions), and an
// Eviction set aside for a pod that is gone would make another.
func (c *Controller) podRuns(ctx context.Context, ev *lifecyclev1alpha1.Eviction) (bool, error) {
	ref := ev.Spec.Target.Pod
	if ref == nil {
		return false, nil
	}
	pod, err := c.podLister.Pods(ev.Namespace).Get(ref.Name)
	if err != nil {
		return false, nil
	}
	if ending, _ := eviction.Ended(pod, ref.Name, ref.UID); ending != "" {
		return false, nil
	}
	callCtx, cancel := context.WithTimeout(ctx, c.callTimeout)
	defer cancel()
	if pod, err = podlookup.Live(callCtx, c.client.CoreV1(), ev.Namespace, ref.Name); err != nil {
		return false, err
	}
	ending, _ := eviction.Ended(pod, ref.Name, ref.UID)
	return ending == "", nil
}

// untrustedResponders says why the responders of ev, which started, are
// not the ones the controller set up for pod while it runs (once it is
// gone or terminal, no turn is left to skip): they
// differ from those the pod declares (with the default evictor), or a
// responder whose turn has not started has more in its entry than its name,
// which kube-apiserver lets only the first writer of the status put there
// (a completion written there would end the responder's turn the moment it
// started). "" when they are the pod's.
func untrustedResponders(ev *lifecyclev1alpha1.Eviction, pod *corev1.Pod) string {
	ref := ev.Spec.Target.Pod
	if len(ev.Status.TargetResponders) == 0 || ref == nil {
		return ""
	}
	if ending, _ := eviction.Ended(pod, ref.Name, ref.UID); ending != "" {
		return ""
	}
	if !sameResponders(ev.Status.TargetResponders, lifecycleutil.PodResponders(pod)) {
		return MessageRespondersNotThePods
	}
	for _, r := range ev.Status.TargetResponders {
		if r.State != lifecyclev1alpha1.ResponderStateInactive {
			continue
		}
		if entry := lifecycleutil.ResponderStatus(ev, r.Name); entry != nil && *entry != (lifecyclev1alpha1.ResponderStatus{Name: r.Name}) {
			return fmt.Sprintf(MessageResponderBeforeItsTurn, r.Name)
		}
	}
	return ""
}

// sameResponders is true when a and b name the same responders with the
// same priorities, whatever their states and order.
func sameResponders(a, b []lifecyclev1alpha1.TargetResponder) bool {
	key := func(r lifecyclev1alpha1.TargetResponder) string {
		return fmt.Sprintf("%s/%d", r.Name, ptr.Deref(r.Priority, -1))
	}
	keysOf := func(rs []lifecyclev1alpha1.TargetResponder) []string {
		keys := make([]string, 0, len(rs))
		for _, r := range rs {
			keys = append(keys, key(r))
		}
		slices.Sort(keys)
		return keys
	}
	return slices.Equal(keysOf(a), keysOf(b))
}

// interruptActive ends the turn of the active responder of rs, for an
// Eviction that fails while one is active: kube-apiserver lets an Eviction
// fail only once no responder is active.
func interruptActive(rs []lifecyclev1alpha1.TargetResponder) {
	for i := range rs {
		if rs[i].State == lifecyclev1alpha1.ResponderStateActive {
			rs[i].State = lifecyclev1alpha1.ResponderStateInterrupted
		}
	}
}
