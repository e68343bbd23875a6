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

	"github.com/evictionrequest/apiserver/pkg/bridge"
	"github.com/evictionrequest/apiserver/pkg/controller/lifecycle"
	"github.com/evictionrequest/apiserver/pkg/controller/lifecycle/evictor"
	"github.com/evictionrequest/apiserver/pkg/controller/lifecycle/stepaside"
	"github.com/evictionrequest/apiserver/pkg/controller/nodedrain"
	"github.com/evictionrequest/apiserver/pkg/util/cachetransform"
)

// cacheManagers are the field managers whose managedFields entries the
// readers of this binary's caches read, each as it declares them: the
// step-aside guard's (kube-controller-manager's controllers), those the
// controller and the evictor take their fields over from, and the eviction
// API bridge's own.
var cacheManagers = slices.Concat(stepaside.ManagersRead, lifecycle.ManagersTakenOver, evictor.ManagersTakenOver, bridge.ManagersRead)

// cachePodAnnotations are the pod annotations the readers of the binary's
// pod cache read, each as it declares them: the controller, the evictor,
// the node drain and the eviction API bridge.
var cachePodAnnotations = slices.Concat(lifecycle.PodAnnotationsRead, evictor.PodAnnotationsRead,
	nodedrain.PodAnnotationsRead, bridge.PodAnnotationsRead)

// cacheTransform is the transform of every informer of the binary: every
// write of the controllers is a server-side apply, so the caches need not
// hold managedFields, about a third of an Eviction, but the entries of
// cacheManagers; and of pods only what their readers read, of their
// annotations cachePodAnnotations.
var cacheTransform = cachetransform.TrimPodsStripManagedFieldsBut(cachePodAnnotations, cacheManagers...)
