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

package requester_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sfake "k8s.io/client-go/kubernetes/fake"

	erfake "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned/fake"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
)

// A descheduler asks for the eviction of a pod, and changes its mind. In a
// program the clients come from versioned.NewForConfig and
// kubernetes.NewForConfig; fake clientsets stand in for a cluster here.
func Example() {
	ctx := context.Background()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-0", UID: "6f2d4c1e-0000-4000-8000-000000000000"}}
	evictionRequests, kube := erfake.NewClientset(), k8sfake.NewClientset(pod)

	descheduler, err := requester.New("descheduler.example.com", evictionRequests, kube.CoreV1(), requester.Options{})
	if err != nil {
		panic(err)
	}
	er, err := descheduler.Request(ctx, pod)
	if err != nil {
		panic(err)
	}
	fmt.Printf("EvictionRequest %s/%s for pod %s, requested by %s\n", er.Namespace, er.Name, er.Spec.Target.PodRef.Name, er.Spec.Requesters[0].Name)

	// Asking again, after a crash for example, changes nothing.
	if _, err := descheduler.Request(ctx, pod); err != nil {
		panic(err)
	}

	// The pod is fine where it is after all.
	er, err = descheduler.Withdraw(ctx, pod.Namespace, pod.UID)
	if requester.IsCancellationForbidden(err) {
		fmt.Println("too late: the interceptor forbids canceling the eviction")
		return
	}
	if err != nil {
		panic(err)
	}
	fmt.Printf("requesters left: %d\n", len(er.Spec.Requesters))
	// Output:
	// EvictionRequest shop/6f2d4c1e-0000-4000-8000-000000000000 for pod web-0, requested by descheduler.example.com
	// requesters left: 0
}
