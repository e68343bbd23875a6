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
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
)

const (
	evictor = lifecycleutil.Evictor
	active  = lifecyclev1alpha1.ResponderStateActive
	idle    = lifecyclev1alpha1.ResponderStateInactive
)

var (
	awaitingConditions = []string{"Failed=False/AwaitingEviction", "TargetEvicted=False/AwaitingEviction"}
	podWithResponders  = wrappers.MakePod("web").Responders(
		wrappers.Responder("acme.io/backup", 1000), wrappers.Responder("acme.io/surge", 10000)).Obj()
)

// running is an Eviction of podWithResponders whose surge responder has
// been active since start.
func running() *wrappers.EvictionWrapper {
	return wrappers.MakeEviction("pod-1-web", podWithResponders).
		Requester(requester, lifecyclev1alpha1.RequesterIntentEviction).
		TargetResponder("acme.io/surge", 10000, active).TargetResponder("acme.io/backup", 1000, idle).
		TargetResponder(evictor, lifecycleutil.EvictorPriority, idle).Started("acme.io/surge", start)
}
