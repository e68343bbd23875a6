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

package interceptor_test

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	erfake "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned/fake"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/sdk/interceptor"
)

// An operator moves a database's data off the node before its pod goes,
// telling how far it is, then passes the request on so that the pod is
// evicted. In a program the clients come from versioned.NewForConfig and
// kubernetes.NewForConfig; fake clientsets stand in for a cluster here,
// with a request the controller made the operator the active interceptor of.
func Example() {
	const name = "database.operator.example.com"
	evictionRequests := erfake.NewClientset(&v1alpha1.EvictionRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "6f2d4c1e-0000-4000-8000-000000000000"},
		Spec: v1alpha1.EvictionRequestSpec{
			Type:         v1alpha1.Soft,
			Target:       v1alpha1.EvictionTarget{PodRef: &v1alpha1.LocalPodReference{Name: "db-0", UID: "6f2d4c1e-0000-4000-8000-000000000000"}},
			Requesters:   []v1alpha1.Requester{{Name: "nodemaintenance.k8s.io"}},
			Interceptors: []v1alpha1.Interceptor{{Name: name}},
		},
		Status: v1alpha1.EvictionRequestStatus{ActiveInterceptorName: ptr.To(name)},
	})
	done := make(chan struct{})

	i, err := interceptor.New(interceptor.Config{
		Name:       name,
		API:        evictionapi.Coordination,
		Client:     evictionRequests,
		KubeClient: k8sfake.NewClientset(),
		Handler: func(ctx context.Context, req *interceptor.Request) (interceptor.Result, error) {
			for _, table := range []string{"orders", "customers"} {
				finish := time.Now().Add(time.Minute)
				if err := req.Report(ctx, interceptor.Progress{
					Message:            "copying table " + table,
					ExpectedFinishTime: &finish,
					// Half-copied data must not be abandoned.
					CancellationPolicy: v1alpha1.Forbid,
				}); err != nil {
					return interceptor.Result{}, err
				}
				// ... copy the table; the SDK heartbeats meanwhile ...
			}
			defer close(done)
			return interceptor.Complete("pod %s's data is on another node", req.Pod().Name), nil
		},
	})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		_ = i.Run(ctx)
	}()

	<-done
	for {
		er, _ := evictionRequests.CoordinationV1alpha1().EvictionRequests("shop").Get(ctx, "6f2d4c1e-0000-4000-8000-000000000000", metav1.GetOptions{})
		if er.Status.ActiveInterceptorCompleted {
			fmt.Printf("%s (cancellation %s)\n", er.Status.Message, *er.Status.EvictionRequestCancellationPolicy)
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-stopped
	// Output:
	// pod db-0's data is on another node (cancellation Forbid)
}
