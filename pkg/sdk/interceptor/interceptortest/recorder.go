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

// Package interceptortest helps unit-test an interceptor's Handler without
// the SDK's watch and heartbeats: NewRequest gives the Handler a Request
// whose reports a Recorder keeps, as net/http/httptest records responses.
package interceptortest

import (
	"context"
	"sync"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/sdk/interceptor"
)

// Recorder keeps what a Handler reports.
type Recorder struct {
	mu      sync.Mutex
	reports []interceptor.Progress
	// Err, when set, is what Report returns, such as interceptor.ErrLost.
	Err error
}

// NewRequest returns the Request a Handler sees for er and the Recorder of
// its reports.
func NewRequest(er *v1alpha1.EvictionRequest) (*interceptor.Request, *Recorder) {
	r := &Recorder{}
	return interceptor.NewRequest(er.DeepCopy(), r), r
}

// Report records progress.
func (r *Recorder) Report(_ context.Context, progress interceptor.Progress) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.Err != nil {
		return r.Err
	}
	r.reports = append(r.reports, progress)
	return nil
}

// Reports returns every progress reported so far, oldest first.
func (r *Recorder) Reports() []interceptor.Progress {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]interceptor.Progress(nil), r.reports...)
}

// Last is the progress as the request shows it after the reports: an empty
// message or policy keeps the one reported before, as in the SDK.
func (r *Recorder) Last() interceptor.Progress {
	r.mu.Lock()
	defer r.mu.Unlock()
	var last interceptor.Progress
	for _, p := range r.reports {
		if p.Message == "" {
			p.Message = last.Message
		}
		if p.CancellationPolicy == "" {
			p.CancellationPolicy = last.CancellationPolicy
		}
		last = p
	}
	return last
}
