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

// +k8s:openapi-gen=true
// +k8s:deepcopy-gen=package
// +k8s:protobuf-gen=package
// +k8s:conversion-gen=github.com/evictionrequest/apiserver/pkg/apis/coordination
// +k8s:defaulter-gen=TypeMeta
// +k8s:openapi-model-package=com.github.evictionrequest.apiserver.pkg.apis.coordination.v1alpha1
// +groupName=coordination.k8s.io

// Package v1alpha1 is the v1alpha1 version of the EvictionRequest API of
// KEP-4563, served in the coordination.k8s.io group beside the built-in
// Lease API.
package v1alpha1
