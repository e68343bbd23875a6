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

import "strings"

// PodInterceptorsAnnotation is the pod annotation that declares the pod's
// interceptors: a comma-separated, ordered list of interceptor names, index 0
// first. It stands in for the KEP's pod field .spec.evictionInterceptors,
// which pods cannot gain out of tree; the highest index is selected first.
// Admission copies it into .spec.interceptors when an EvictionRequest is
// created.
const PodInterceptorsAnnotation = "evictionrequest.coordination.k8s.io/interceptors"

// PodInterceptorNames parses the PodInterceptorsAnnotation of a pod's
// annotations into the names it lists, index 0 first, each trimmed of
// spaces; nil when the annotation is absent or blank. It does not validate
// the names: a name may be empty or invalid, which validation refuses.
func PodInterceptorNames(annotations map[string]string) []string {
	value := strings.TrimSpace(annotations[PodInterceptorsAnnotation])
	if value == "" {
		return nil
	}
	names := strings.Split(value, ",")
	for i := range names {
		names[i] = strings.TrimSpace(names[i])
	}
	return names
}
