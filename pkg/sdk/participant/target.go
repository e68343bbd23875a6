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

package participant

import (
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	"k8s.io/apimachinery/pkg/types"

	coordinationutil "github.com/evictionrequest/apiserver/pkg/api/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
)

// Target is the pod an object of a Participant's informers targets: a
// coordination.k8s.io EvictionRequest, or a lifecycle.k8s.io
// EvictionRequest or Eviction; ok is false for any other object.
func Target(obj any) (pod types.NamespacedName, uid types.UID, ok bool) {
	switch o := obj.(type) {
	case *v1alpha1.EvictionRequest:
		if o.Spec.Target.PodRef != nil {
			return types.NamespacedName{Namespace: o.Namespace, Name: coordinationutil.PodName(o)}, types.UID(o.Spec.Target.PodRef.UID), true
		}
	case *lifecyclev1alpha1.EvictionRequest:
		if ref := o.Spec.Target.Pod; ref != nil {
			return types.NamespacedName{Namespace: o.Namespace, Name: ref.Name}, ref.UID, true
		}
	case *lifecyclev1alpha1.Eviction:
		if ref := o.Spec.Target.Pod; ref != nil {
			return types.NamespacedName{Namespace: o.Namespace, Name: ref.Name}, ref.UID, true
		}
	}
	return types.NamespacedName{}, "", false
}
