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
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/evictionrequest/apiserver/pkg/bridge"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
)

// record is where the eviction of one pod stands, read from either API: the
// object that holds it, the pod, the requesters, the chain of participants
// that run before the pod goes, and the request's status as a drain reads
// it.
type record struct {
	// kind and name name the object that holds the eviction, as the report
	// shows it.
	kind, name string
	// pod and uid are the target; target is the pod while it exists.
	pod    types.NamespacedName
	uid    types.UID
	target *corev1.Pod
	// created is when the eviction was first requested.
	created time.Time
	request participant.Status
	// state replaces the drain's state when the API says more (a final
	// reason).
	state      string
	requesters []string
	// chainTitle, chainOrder and chain are the participants that run in
	// turn; noChain is shown when there are none.
	chainTitle, chainOrder, noChain string
	chain                           []chainEntry
	// extra are API-specific lines after the message.
	extra [][2]string
	// objects are the "kind/name" of the objects whose events the report
	// shows.
	objects []string
}

// statusSource reads records from one API.
type statusSource interface {
	// ofPods are the records of pods, by UID.
	ofPods(ctx context.Context, pods map[types.UID]*corev1.Pod) ([]record, error)
	// ofPodName are the records that target a pod that is gone, by name.
	ofPodName(ctx context.Context, namespace, name string) ([]record, error)
	// inNamespace are the records of a namespace (all with ""); pods are
	// the namespace's pods by UID.
	inNamespace(ctx context.Context, namespace string, pods map[types.UID]*corev1.Pod) ([]record, error)
	// eventKinds are the kinds of the objects events are recorded on.
	eventKinds() []string
}

// source is the statusSource of the API the plugin speaks.
func (s *StatusOptions) source() statusSource {
	if s.api() == evictionapi.Lifecycle {
		return lifecycleStatus{s}
	}
	return coordinationStatus{s}
}

// bridgeLine names who asked for the eviction through the Eviction API, read
// from the eviction API bridge's annotations on its request; requesting says
// whether the bridge still requests it. ok is false when no eviction call
// reached the bridge.
func bridgeLine(annotations map[string]string, requesting bool) (line [2]string, ok bool) {
	callers := bridge.Callers(annotations)
	if len(callers) == 0 {
		return line, false
	}
	text := "requested through the eviction API by " + strings.Join(callers, ", ")
	if !requesting {
		text += " (withdrawn)"
	}
	return [2]string{"Eviction API", text}, true
}
