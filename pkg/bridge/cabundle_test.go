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

package bridge

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
)

// The keeper makes the CA the bundle of every webhook at start, puts it
// back when someone re-applies the configuration without it, looks again
// at every change but writes nothing while it is right, and trusts a
// renewed CA within caBundleResync, with nothing else changed.
func TestTheCABundleIsKeptCurrentByOneWriter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const name = "evictionrequest-eviction-bridge"
		config := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: WebhookName, ClientConfig: admissionregistrationv1.WebhookClientConfig{CABundle: []byte("stale")}}}}
		f := newFixtureWith(t, evictionapi.Coordination, Config{WebhookConfiguration: name}, config)
		configs := f.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations()
		var mu sync.Mutex
		ca := "the CA"
		k, err := NewCABundleKeeper(f.bridge, configs, func() ([]byte, error) {
			mu.Lock()
			defer mu.Unlock()
			return []byte(ca), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(f.ctx)
		defer cancel()
		go func() { _ = k.Run(ctx) }()
		bundle := func() string {
			synctest.Wait()
			got, err := configs.Get(f.ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return string(got.Webhooks[0].ClientConfig.CABundle)
		}
		if got := bundle(); got != "the CA" {
			t.Fatalf("caBundle %q at start, want the CA", got)
		}
		// Someone re-applies the configuration without the bundle.
		reapplied, _ := configs.Get(f.ctx, name, metav1.GetOptions{})
		reapplied.Webhooks[0].ClientConfig.CABundle = nil
		if _, err := configs.Update(f.ctx, reapplied, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if got := bundle(); got != "the CA" {
			t.Fatalf("caBundle %q after a re-apply, want the CA again", got)
		}
		// A change that leaves the bundle right: the keeper reads it again,
		// and writes nothing.
		touched, _ := configs.Get(f.ctx, name, metav1.GetOptions{})
		touched.Labels = map[string]string{"touched": "true"}
		before := len(f.kube.Actions())
		if _, err := configs.Update(f.ctx, touched, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		after := f.kube.Actions()[before+1:]
		if len(after) == 0 {
			t.Error("the keeper did not look at the changed configuration")
		}
		if w := writes(after); len(w) != 0 {
			t.Errorf("the keeper wrote %v while the bundle was right", w)
		}
		// The CA is renewed (a Secret's files replaced in place): nothing
		// tells the keeper but its resync.
		mu.Lock()
		ca = "the renewed CA"
		mu.Unlock()
		time.Sleep(caBundleResync)
		if got := bundle(); got != "the renewed CA" {
			t.Errorf("caBundle %q a resync after the CA was renewed, want the renewed CA", got)
		}
	})
}
