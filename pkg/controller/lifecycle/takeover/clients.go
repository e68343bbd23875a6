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

package takeover

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	lifecyclev1alpha1client "k8s.io/client-go/kubernetes/typed/lifecycle/v1alpha1"
)

// Eviction is the Client of the Eviction namespace/name, each call bounded
// by timeout, its patches written as manager.
func Eviction(client lifecyclev1alpha1client.EvictionsGetter, namespace, name, manager string, timeout time.Duration) Client {
	evictions := client.Evictions(namespace)
	return Client{
		Get: func(ctx context.Context) (Object, error) {
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			return evictions.Get(ctx, name, metav1.GetOptions{})
		},
		Patch: func(ctx context.Context, patch []byte) error {
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			_, err := evictions.Patch(ctx, name, types.JSONPatchType, patch, metav1.PatchOptions{FieldManager: manager})
			return err
		},
	}
}

// EvictionRequest is the Client of the EvictionRequest namespace/name, each
// call bounded by timeout, its patches written as manager.
func EvictionRequest(client lifecyclev1alpha1client.EvictionRequestsGetter, namespace, name, manager string, timeout time.Duration) Client {
	requests := client.EvictionRequests(namespace)
	return Client{
		Get: func(ctx context.Context) (Object, error) {
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			return requests.Get(ctx, name, metav1.GetOptions{})
		},
		Patch: func(ctx context.Context, patch []byte) error {
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			_, err := requests.Patch(ctx, name, types.JSONPatchType, patch, metav1.PatchOptions{FieldManager: manager})
			return err
		},
	}
}
