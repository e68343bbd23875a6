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
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NewNamespace creates a namespace for the test, named after it, deleted
// when the test ends; it waits for the default service account pods need.
func (f *Framework) NewNamespace(t testing.TB) string {
	t.Helper()
	ctx := t.Context()
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(name) > 40 {
		name = name[:40]
	}
	ns, err := f.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: strings.Trim(name, "-") + "-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a namespace: %v", err)
	}
	t.Cleanup(func() {
		_ = f.Kube.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{})
	})
	if UpstreamControllers() {
		// Kubernetes' controllers run the namespace's Evictions alone:
		// evictionrequest-controller runs the actors only, and its own
		// controllers must write nothing, whatever the test does.
		writes := f.WritesOfOurControllers(t, ns.Name)
		t.Cleanup(func() {
			if w := writes(); len(w) > 0 {
				t.Errorf("evictionrequest-controller's own controllers wrote beside Kubernetes': %v", w)
			}
		})
	}
	Eventually(t, time.Minute, "default service account in "+ns.Name, func(ctx context.Context) error {
		_, err := f.Kube.CoreV1().ServiceAccounts(ns.Name).Get(ctx, "default", metav1.GetOptions{})
		return err
	})
	return ns.Name
}
