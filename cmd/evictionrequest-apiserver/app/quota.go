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
	"k8s.io/apiserver/pkg/admission"
	genericadmissioninitializer "k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/admission/plugin/resourcequota"
	"k8s.io/apiserver/pkg/quota/v1/generic"
	genericoptions "k8s.io/apiserver/pkg/server/options"
)

// addResourceQuota runs kube-apiserver's ResourceQuota admission plugin
// last, on by default: kube-apiserver's own quota admission never sees the
// requests of an aggregated API, so the server enforces the ResourceQuotas
// of a namespace itself. The plugin counts an EvictionRequest against
// count/evictionrequests.coordination.k8s.io as it counts any resource,
// writes the usage to the ResourceQuota's status in kube-apiserver, and
// refuses with kube-apiserver's message; kube-controller-manager's
// resourcequota controller recomputes the usage, as for every resource.
func addResourceQuota(admissionOptions *genericoptions.AdmissionOptions) {
	resourcequota.Register(admissionOptions.Plugins)
	admissionOptions.RecommendedPluginOrder = append(admissionOptions.RecommendedPluginOrder, resourcequota.PluginName)
}

// quotaInitializer gives the ResourceQuota plugin its configuration: no
// evaluator of its own, so that every resource is counted by objects.
type quotaInitializer struct{}

// Initialize sets the quota configuration of a plugin that wants one.
func (quotaInitializer) Initialize(plugin admission.Interface) {
	if wants, ok := plugin.(genericadmissioninitializer.WantsQuotaConfiguration); ok {
		wants.SetQuotaConfiguration(generic.NewConfiguration(nil, nil))
	}
}
