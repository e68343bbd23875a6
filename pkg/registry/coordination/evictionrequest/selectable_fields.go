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

package evictionrequest

import (
	"fmt"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
)

// GetAttrs returns the labels and the selectable fields of an EvictionRequest,
// for label and field selectors on list and watch.
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	er, ok := obj.(*coordination.EvictionRequest)
	if !ok {
		return nil, nil, fmt.Errorf("not an EvictionRequest: %T", obj)
	}
	return er.Labels, SelectableFields(er), nil
}

// SelectableFields returns metadata.name, metadata.namespace and the fields
// clients select on: the pod's name and UID, so a requester finds the
// request of a pod, and the active interceptor, so an interceptor watches
// only the requests it owns.
func SelectableFields(er *coordination.EvictionRequest) fields.Set {
	var podName, podUID, active string
	if podRef := er.Spec.Target.PodRef; podRef != nil {
		podName, podUID = podRef.Name, podRef.UID
	}
	if er.Status.ActiveInterceptorName != nil {
		active = *er.Status.ActiveInterceptorName
	}
	return generic.AddObjectMetaFieldsSet(fields.Set{
		v1alpha1.PodNameField:               podName,
		v1alpha1.PodUIDField:                podUID,
		v1alpha1.ActiveInterceptorNameField: active,
	}, &er.ObjectMeta, true)
}
