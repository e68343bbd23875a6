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
	"strconv"

	coordinationutil "github.com/evictionrequest/apiserver/pkg/api/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
)

// chainEntry is one interceptor of a request, in the order they run.
type chainEntry struct {
	// Index is the interceptor's index, or the responder's priority.
	Index string
	Name  string
	// Turn is done, active, completed (active and finished its part) or waiting.
	Turn string
}

// interceptorChain lists the interceptors of er highest index first, the
// order they run in, with where each one's turn stands.
func interceptorChain(er *v1alpha1.EvictionRequest) []chainEntry {
	active := -1
	name := coordinationutil.ActiveInterceptor(er)
	for i := range er.Spec.Interceptors {
		if er.Spec.Interceptors[i].Name == name {
			active = i
		}
	}
	complete := coordinationutil.IsComplete(er)
	chain := make([]chainEntry, 0, len(er.Spec.Interceptors))
	for i := len(er.Spec.Interceptors) - 1; i >= 0; i-- {
		entry := chainEntry{Index: strconv.Itoa(i), Name: er.Spec.Interceptors[i].Name, Turn: "waiting"}
		switch {
		case complete:
			entry.Turn = "-"
		case active < 0:
		case i > active:
			entry.Turn = "done"
		case i == active && er.Status.ActiveInterceptorCompleted:
			entry.Turn = "completed"
		case i == active:
			entry.Turn = "active"
		}
		chain = append(chain, entry)
	}
	return chain
}
