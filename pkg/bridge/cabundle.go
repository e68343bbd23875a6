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
	"bytes"
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	admissionregistrationv1client "k8s.io/client-go/kubernetes/typed/admissionregistration/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
)

// SyncCABundle makes ca the caBundle of every webhook of the
// ValidatingWebhookConfiguration name: the CA of the serving certificate
// the bridge answers with, however it was issued (files, cert-manager,
// self-signed), so that kube-apiserver trusts it. Every replica serves with
// the same certificate, so every replica writes the same bundle.
func SyncCABundle(ctx context.Context, client admissionregistrationv1client.ValidatingWebhookConfigurationInterface, name string, ca []byte, timeout time.Duration) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		callCtx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		config, err := client.Get(callCtx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		changed := false
		for i := range config.Webhooks {
			if !bytes.Equal(config.Webhooks[i].ClientConfig.CABundle, ca) {
				config.Webhooks[i].ClientConfig.CABundle = ca
				changed = true
			}
		}
		if !changed {
			return nil
		}
		_, err = client.Update(callCtx, config, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("setting the caBundle of ValidatingWebhookConfiguration %s: %w", name, err)
	}
	klog.FromContext(ctx).V(2).Info("The eviction API bridge's webhook trusts its serving certificate", "validatingWebhookConfiguration", name)
	return nil
}
