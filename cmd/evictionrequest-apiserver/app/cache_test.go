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
	"testing"

	"github.com/evictionrequest/apiserver/internal/cachetest"
	"github.com/evictionrequest/apiserver/pkg/admission/plugin/evictionrequest"
	"github.com/evictionrequest/apiserver/pkg/bridge"
	coordinationcontroller "github.com/evictionrequest/apiserver/pkg/controller/coordination"
	"github.com/evictionrequest/apiserver/pkg/controller/nodedrain"
)

// The binary's pod cache keeps every annotation each of its readers
// declares it reads, and no other.
func TestThePodCacheKeepsWhatEachReaderDeclares(t *testing.T) {
	readers := map[string][]string{
		"admission":                       evictionrequest.PodAnnotationsRead,
		"the eviction request controller": coordinationcontroller.PodAnnotationsRead,
		"the node drain":                  nodedrain.PodAnnotationsRead,
		"the eviction API bridge":         bridge.PodAnnotationsRead,
	}
	cachetest.KeepsDeclaredPodAnnotations(t, trimPod, readers)
}
