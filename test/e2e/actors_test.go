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

package e2e

import (
	"context"
	"testing"
	"time"

	"k8s.io/klog/v2/ktesting"

	"github.com/evictionrequest/apiserver/pkg/sdk/interceptor"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
)

// testHeartbeatPeriod is how often the suite's interceptors heartbeat: far
// inside any deadline, and often enough to be seen within a test.
const testHeartbeatPeriod = time.Second

// startInterceptor runs an SDK interceptor in the test process, limited to
// the test's namespace (tests run in parallel and share interceptor names),
// until the test ends.
func startInterceptor(t *testing.T, ns, name string, handler interceptor.Handler) {
	t.Helper()
	i, err := interceptor.New(interceptor.Config{
		Name:            name,
		Namespace:       ns,
		Handler:         handler,
		Client:          f.Clientset,
		KubeClient:      f.Kube,
		HeartbeatPeriod: testHeartbeatPeriod,
	})
	if err != nil {
		t.Fatal(err)
	}
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := i.Run(ctx); err != nil {
			t.Errorf("interceptor %s: %v", name, err)
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

// newRequester is an SDK requester of the suite, as the cluster admin. Its
// requests outlive their pods (requester.Options.KeepAfterPod), so that the
// tests can read how they completed before the garbage collector would
// delete them with the pod; ownedRequester makes them owned by the pod.
func newRequester(t *testing.T, name string) *requester.Requester {
	t.Helper()
	return newRequesterWith(t, name, requester.Options{KeepAfterPod: true})
}

// ownedRequester is a requester whose requests the pod owns, as by default.
func ownedRequester(t *testing.T, name string) *requester.Requester {
	t.Helper()
	return newRequesterWith(t, name, requester.Options{})
}

func newRequesterWith(t *testing.T, name string, opts requester.Options) *requester.Requester {
	t.Helper()
	r, err := requester.New(name, f.Clientset, f.Kube.CoreV1(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// declines is a handler that passes every request on at once.
func declines(context.Context, *interceptor.Request) (interceptor.Result, error) {
	return interceptor.Decline("not mine"), nil
}
