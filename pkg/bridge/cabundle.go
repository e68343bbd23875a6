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

	"github.com/evictionrequest/apiserver/pkg/controller"
)

// SyncCABundle makes ca the caBundle of every webhook of the
// ValidatingWebhookConfiguration name, writing only when one differs: the
// CA of the serving certificate the bridge answers with, however it was
// issued (files, cert-manager, self-signed), so that kube-apiserver trusts
// it.
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
	klog.FromContext(ctx).V(4).Info("The eviction API bridge's webhook trusts its serving certificate", "validatingWebhookConfiguration", name)
	return nil
}

// CABundleKeeperName names the controller that keeps the bridge's caBundle.
const CABundleKeeperName = "eviction-bridge-ca-bundle"

// caBundleResync is how often the keeper reads the CA again even when
// nothing changed: a certificate renewed into a new CA (a Secret's files
// are replaced in place) is trusted within it.
const caBundleResync = time.Minute

// CABundleKeeper keeps the caBundle of the bridge's ValidatingWebhookConfiguration
// equal to the CA of the serving certificate, for as long as it runs: at
// start, whenever the configuration changes (someone re-applied it without
// the bundle), and every caBundleResync. It runs on the leader only, so that
// one process writes it: replicas that disagreed (self-signed ones, each with
// a CA of its own) would otherwise overwrite each other's for ever.
type CABundleKeeper struct {
	client   admissionregistrationv1client.ValidatingWebhookConfigurationInterface
	name     string
	ca       func() ([]byte, error)
	timeout  time.Duration
	changed  chan struct{}
	handlers controller.Handlers
}

// NewCABundleKeeper returns the keeper of the configuration of b (its
// WebhookConfiguration), whose CA ca reads.
func NewCABundleKeeper(b *Bridge, client admissionregistrationv1client.ValidatingWebhookConfigurationInterface, ca func() ([]byte, error)) (*CABundleKeeper, error) {
	k := &CABundleKeeper{client: client, name: b.cfg.WebhookConfiguration, ca: ca, timeout: b.cfg.CallTimeout, changed: make(chan struct{}, 1)}
	if err := k.handlers.Add(b.cfg.Webhooks.Informer(), controller.OnEveryChange(k.wake)); err != nil {
		return nil, err
	}
	return k, nil
}

// wake asks Run to look again, once however many changes came meanwhile.
func (k *CABundleKeeper) wake(any) {
	select {
	case k.changed <- struct{}{}:
	default:
	}
}

// Run keeps the bundle until ctx ends.
func (k *CABundleKeeper) Run(ctx context.Context) error {
	defer k.Close(ctx)
	ticker := time.NewTicker(caBundleResync)
	defer ticker.Stop()
	for {
		ca, err := k.ca()
		if err == nil {
			err = SyncCABundle(ctx, k.client, k.name, ca, k.timeout)
		}
		if err != nil && ctx.Err() == nil {
			klog.FromContext(ctx).Error(err, "The eviction API bridge's webhook may not trust the server; trying again")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-k.changed:
		case <-ticker.C:
		}
	}
}

// Close removes the keeper's handler from the bridge's informer, which
// outlives a leadership term.
func (k *CABundleKeeper) Close(ctx context.Context) {
	k.handlers.RemoveAll(ctx)
}
