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
	"testing"
	"testing/synctest"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
)

// The keeper makes the CA the bundle of every webhook at start, puts it
// back when someone re-applies the configuration without it, and writes
// nothing while it is right.
func TestTheCABundleIsKeptCurrentByOneWriter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const name = "evictionrequest-eviction-bridge"
		config := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: WebhookName, ClientConfig: admissionregistrationv1.WebhookClientConfig{CABundle: []byte("stale")}}}}
		f := newFixtureWith(t, evictionapi.Coordination, Config{WebhookConfiguration: name}, config)
		configs := f.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations()
		k, err := NewCABundleKeeper(f.bridge, configs, func() ([]byte, error) { return []byte("the CA"), nil })
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
		f.kube.ClearActions()
		synctest.Wait()
		if w := writes(f.kube.Actions()); len(w) != 0 {
			t.Errorf("the keeper wrote %v while the bundle was right", w)
		}
	})
}
