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

package v1alpha1

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
)

// Field selectors supported on EvictionRequests besides metadata.name and
// metadata.namespace. An interceptor watches only the requests it owns with
// fields.OneTermEqualSelector(ActiveInterceptorNameField, name).
const (
	// PodNameField selects on .spec.target.podRef.name.
	PodNameField = "spec.target.podRef.name"
	// PodUIDField selects on .spec.target.podRef.uid.
	PodUIDField = "spec.target.podRef.uid"
	// ActiveInterceptorNameField selects on .status.activeInterceptorName;
	// an unset name matches the empty string.
	ActiveInterceptorNameField = "status.activeInterceptorName"
)

// addFieldLabelConversionFuncs lets the server accept the selectable fields
// of EvictionRequest; any other field label is refused with a clear error.
func addFieldLabelConversionFuncs(scheme *runtime.Scheme) error {
	return scheme.AddFieldLabelConversionFunc(SchemeGroupVersion.WithKind("EvictionRequest"),
		func(label, value string) (string, string, error) {
			switch label {
			case "metadata.name", "metadata.namespace", PodNameField, PodUIDField, ActiveInterceptorNameField:
				return label, value, nil
			default:
				return "", "", fmt.Errorf("field label not supported for EvictionRequest: %s", label)
			}
		})
}
