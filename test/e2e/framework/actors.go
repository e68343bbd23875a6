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

package framework

import (
	"testing"
	"time"

	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/sdk/interceptor"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
)

// HeartbeatPeriod is how often the suite's interceptors heartbeat: far
// inside any deadline, and often enough to be seen within a test.
const HeartbeatPeriod = time.Second

// StartInterceptor runs an SDK interceptor named name with handler in the
// test process, limited to namespace ns (tests run in parallel and share
// interceptor names), until the test ends.
func (f *Framework) StartInterceptor(t testing.TB, ns, name string, handler interceptor.Handler) {
	t.Helper()
	i, err := interceptor.New(interceptor.Config{
		Name: name, Namespace: ns, Handler: handler, API: evictionapi.Coordination,
		Client: f.Clientset, KubeClient: f.Kube, HeartbeatPeriod: HeartbeatPeriod,
	})
	if err != nil {
		t.Fatal(err)
	}
	f.run(t, name, i)
}

// NewRequester is an SDK requester named name, as the cluster admin.
func (f *Framework) NewRequester(t testing.TB, name string, opts requester.Options) *requester.Requester {
	t.Helper()
	r, err := requester.New(name, f.Clientset, f.Kube.CoreV1(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
