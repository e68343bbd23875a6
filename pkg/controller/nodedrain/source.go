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

package nodedrain

import (
	"k8s.io/apimachinery/pkg/types"
	lifecycleinformers "k8s.io/client-go/informers/lifecycle/v1alpha1"
	"k8s.io/client-go/tools/cache"

	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"

	erutil "github.com/evictionrequest/apiserver/pkg/api/v1alpha1/evictionrequest"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/drain"
	coordinationinformers "github.com/evictionrequest/apiserver/pkg/generated/informers/externalversions/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
	"github.com/evictionrequest/apiserver/pkg/util/lifecycleindex"
)

// RequestSource is the EvictionRequest API the node drain speaks: how it
// requests, withdraws and reads its requests, and the informers whose
// changes wake the drain of the node of the pod they target.
type RequestSource struct {
	// Requests requests, withdraws and reads the drain's requests.
	Requests drain.Requests
	// Informers hold the objects Requests reads.
	Informers []cache.SharedIndexInformer
	// Target is the pod an object of Informers targets; ok is false for
	// an object that targets none.
	Target func(obj any) (pod types.NamespacedName, uid types.UID, ok bool)
}

// CoordinationSource is the node drain on coordination.k8s.io: one
// EvictionRequest per pod, named after its UID, where req lists itself.
func CoordinationSource(req *requester.Requester, requests coordinationinformers.EvictionRequestInformer) RequestSource {
	return RequestSource{
		Requests:  drain.NewEvictionRequests(req, requests.Lister()),
		Informers: []cache.SharedIndexInformer{requests.Informer()},
		Target: func(obj any) (types.NamespacedName, types.UID, bool) {
			er, ok := obj.(*v1alpha1.EvictionRequest)
			if !ok || er.Spec.Target.PodRef == nil {
				return types.NamespacedName{}, "", false
			}
			return types.NamespacedName{Namespace: er.Namespace, Name: erutil.PodName(er)}, types.UID(er.Spec.Target.PodRef.UID), true
		},
	}
}

// LifecycleSource is the node drain on lifecycle.k8s.io: an EvictionRequest
// of req's own per pod, whose pod's Eviction says where it stands. It
// indexes the Evictions by target, before the informers start.
func LifecycleSource(req *requester.Lifecycle, requests lifecycleinformers.EvictionRequestInformer, evictions lifecycleinformers.EvictionInformer) (RequestSource, error) {
	if err := lifecycleindex.AddEvictions(evictions.Informer()); err != nil {
		return RequestSource{}, err
	}
	return RequestSource{
		Requests:  drain.NewLifecycleRequests(req, requests.Lister(), evictions.Informer().GetIndexer()),
		Informers: []cache.SharedIndexInformer{requests.Informer(), evictions.Informer()},
		Target: func(obj any) (types.NamespacedName, types.UID, bool) {
			switch o := obj.(type) {
			case *lifecyclev1alpha1.EvictionRequest:
				if pod := o.Spec.Target.Pod; pod != nil {
					return types.NamespacedName{Namespace: o.Namespace, Name: pod.Name}, pod.UID, true
				}
			case *lifecyclev1alpha1.Eviction:
				if pod := o.Spec.Target.Pod; pod != nil {
					return types.NamespacedName{Namespace: o.Namespace, Name: pod.Name}, pod.UID, true
				}
			}
			return types.NamespacedName{}, "", false
		},
	}, nil
}
