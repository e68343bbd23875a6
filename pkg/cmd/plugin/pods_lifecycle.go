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

package plugin

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
)

// requestLifecycle requests the evictions on lifecycle.k8s.io: the plugin's
// own EvictionRequest per pod, with the Eviction intent.
func (p *PodsOptions) requestLifecycle(ctx context.Context, pods []*corev1.Pod) error {
	for _, pod := range pods {
		er, err := p.lifecycle.Request(ctx, pod)
		if err != nil {
			return fmt.Errorf("requesting the eviction of pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		if lifecycleutil.IsTrue(er.Status.Conditions, lifecyclev1alpha1.EvictionConditionTargetEvicted) {
			fmt.Fprintf(p.Out, "pod/%s: the pod is already evicted (evictionrequest/%s)\n", pod.Name, er.Name)
			continue
		}
		fmt.Fprintf(p.Out, "pod/%s: eviction requested (evictionrequest/%s)\n", pod.Name, er.Name)
	}
	return nil
}

// withdrawLifecycle sets the plugin's EvictionRequests of the pods to the
// Withdrawn intent. Other requesters' requests stay: the eviction is
// canceled once none wants it.
func (p *PodsOptions) withdrawLifecycle(ctx context.Context, pods []*corev1.Pod) error {
	for _, pod := range pods {
		er, err := p.lifecycle.Get(ctx, pod.Namespace, pod.UID)
		switch {
		case apierrors.IsNotFound(err):
			fmt.Fprintf(p.Out, "pod/%s: no EvictionRequest of %s\n", pod.Name, p.lifecycle.Name())
			continue
		case err != nil:
			return fmt.Errorf("reading the EvictionRequest of pod %s/%s: %w", pod.Namespace, pod.Name, err)
		case lifecycleutil.IsRequestFinished(er):
			fmt.Fprintf(p.Out, "pod/%s: evictionrequest/%s is already finished\n", pod.Name, er.Name)
			continue
		case !lifecycleutil.WantsEviction(er):
			fmt.Fprintf(p.Out, "pod/%s: evictionrequest/%s is already withdrawn\n", pod.Name, er.Name)
			continue
		}
		if _, err := p.lifecycle.Withdraw(ctx, pod.Namespace, pod.UID); err != nil {
			return fmt.Errorf("withdrawing from the eviction of pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		fmt.Fprintf(p.Out, "pod/%s: withdrew evictionrequest/%s (intent Withdrawn)\n", pod.Name, er.Name)
	}
	return nil
}
