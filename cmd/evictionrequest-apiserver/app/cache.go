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
	"slices"

	"github.com/evictionrequest/apiserver/pkg/admission/plugin/evictionrequest"
	"github.com/evictionrequest/apiserver/pkg/bridge"
	coordinationcontroller "github.com/evictionrequest/apiserver/pkg/controller/coordination"
	"github.com/evictionrequest/apiserver/pkg/controller/nodedrain"
	"github.com/evictionrequest/apiserver/pkg/util/cachetransform"
)

// cachePodAnnotations are the pod annotations the readers of the server's
// pod cache read, each as it declares them: admission, the eviction
// request controller, the node drain and the eviction API bridge.
var cachePodAnnotations = slices.Concat(evictionrequest.PodAnnotationsRead, coordinationcontroller.PodAnnotationsRead,
	nodedrain.PodAnnotationsRead, bridge.PodAnnotationsRead)

// trimPod is the transform of the server's pod cache, shared by all of
// them: every pod of the cluster, of which they read a few fields and
// cachePodAnnotations.
var trimPod = cachetransform.TrimPodKeeping(cachePodAnnotations...)
