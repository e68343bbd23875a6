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

package validation

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination"
)

const (
	// MaxInterceptors is the maximum number of interceptors of a pod and of
	// an EvictionRequest, so that no request can be stalled indefinitely by
	// an abnormally long chain.
	MaxInterceptors = 100

	reservedDomain = "k8s.io"
)

// AllowedKubernetesInterceptors are the only interceptor names in the
// reserved k8s.io domain: those of the Kubernetes project's own components.
var AllowedKubernetesInterceptors = sets.New(
	"replicaset.apps.k8s.io",
	"deployment.apps.k8s.io",
	"statefulset.apps.k8s.io",
	"daemonset.apps.k8s.io",
	"horizontalpodautoscaler.autoscaling.k8s.io",
	"nodemaintenance.k8s.io",
)

// ValidateInterceptors validates an ordered list of interceptors: at most
// MaxInterceptors unique DNS-1123 subdomains, and names in the k8s.io domain
// only from AllowedKubernetesInterceptors. The admission plugin runs it on a
// pod's interceptor annotation, the strategy on .spec.interceptors.
func ValidateInterceptors(interceptors []coordination.Interceptor, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(interceptors) > MaxInterceptors {
		allErrs = append(allErrs, field.TooMany(fldPath, len(interceptors), MaxInterceptors))
	}
	seen := make(map[string]bool, len(interceptors))
	for i, interceptor := range interceptors {
		namePath := fldPath.Index(i).Child("name")
		allErrs = append(allErrs, validateDNSSubdomainName(interceptor.Name, namePath)...)
		if isReserved(interceptor.Name) && !AllowedKubernetesInterceptors.Has(interceptor.Name) {
			allErrs = append(allErrs, field.Invalid(namePath, interceptor.Name, fmt.Sprintf(
				"names in the %s domain are reserved for Kubernetes components; allowed: %s",
				reservedDomain, strings.Join(sets.List(AllowedKubernetesInterceptors), ", "))))
		}
		if seen[interceptor.Name] {
			allErrs = append(allErrs, field.Duplicate(namePath, interceptor.Name))
		}
		seen[interceptor.Name] = true
	}
	return allErrs
}

func isReserved(name string) bool {
	return name == reservedDomain || strings.HasSuffix(name, "."+reservedDomain)
}
