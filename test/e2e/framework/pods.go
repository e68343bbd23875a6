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
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
)

// PodOptions shape the pods of CreatePod.
type PodOptions struct {
	// Node binds the pod; empty picks the first kwok node.
	Node string
	// Interceptors are written to the pod's interceptor annotation, index 0 first.
	Interceptors []string
	Labels       map[string]string
	// Mutate changes the pod before it is created.
	Mutate func(*corev1.Pod)
}

// CreatePod creates a pod bound to a kwok node and waits until kwok runs it.
func (f *Framework) CreatePod(t testing.TB, ns, name string, opts PodOptions) *corev1.Pod {
	t.Helper()
	ctx := t.Context()
	if opts.Node == "" {
		opts.Node = f.NodeNames[0]
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: opts.Labels},
		Spec: corev1.PodSpec{
			NodeName:   opts.Node,
			Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}},
		},
	}
	if len(opts.Interceptors) > 0 {
		pod.Annotations = map[string]string{v1alpha1.PodInterceptorsAnnotation: strings.Join(opts.Interceptors, ",")}
	}
	if opts.Mutate != nil {
		opts.Mutate(pod)
	}
	pod, err := f.Kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating pod %s/%s: %v", ns, name, err)
	}
	Eventually(t, time.Minute, "pod "+name+" running", func(ctx context.Context) error {
		current, err := f.Kube.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if current.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("phase %s", current.Status.Phase)
		}
		pod = current
		return nil
	})
	return pod
}
