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

package servingcert

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	admissionregistrationv1client "k8s.io/client-go/kubernetes/typed/admissionregistration/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/evictionrequest/apiserver/pkg/bridge"
)

// ControllerName names the controller.
const ControllerName = "serving-certificate-renewer"

// NotAfterAnnotation is the Secret's annotation of when its serving
// certificate expires (Unix seconds), which the chart reads at helm
// upgrade to keep the Secret rather than generate another.
const NotAfterAnnotation = "evictionrequest.github.io/not-after"

// resync bounds how long the controller sleeps: the Secret or a caBundle
// changed by someone else is put right within it.
const resync = 10 * time.Minute

// apiServices is the resource of APIServices.
var apiServices = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// Controller keeps the serving certificate of the Secret SecretName renewed
// (Renew), and the caBundle of the APIService APIService, and of the
// ValidatingWebhookConfiguration Webhook when set, equal to the Secret's
// CA bundle. It runs on the leader only, one writer of each.
type Controller struct {
	Secrets    corev1client.SecretInterface
	SecretName string
	// Dynamic writes the APIService, whose client is not Kubernetes'.
	Dynamic    dynamic.Interface
	APIService string
	Webhooks   admissionregistrationv1client.ValidatingWebhookConfigurationInterface
	Webhook    string
	Policy     Policy
	Clock      clock.WithTicker
	// CallTimeout bounds each call to kube-apiserver.
	CallTimeout time.Duration
}

// Run renews until ctx ends: when Renew says there is more to do, at the
// latest every resync, a minute after a failure.
func (c *Controller) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	for {
		next, err := c.sync(ctx)
		wait := min(next.Sub(c.Clock.Now()), resync)
		if err != nil {
			logger.Error(err, "Renewing the serving certificate", "secret", c.SecretName)
			wait = time.Minute
		}
		select {
		case <-ctx.Done():
			return nil
		case <-c.Clock.After(max(wait, time.Second)):
		}
	}
}

// sync renews the Secret if it is due, after its CA bundle is trusted
// where kube-apiserver reads it, and returns when to look again.
func (c *Controller) sync(ctx context.Context) (time.Time, error) {
	callCtx, cancel := context.WithTimeout(ctx, c.CallTimeout)
	secret, err := c.Secrets.Get(callCtx, c.SecretName, metav1.GetOptions{})
	cancel()
	if err != nil {
		return time.Time{}, fmt.Errorf("reading Secret %s: %w", c.SecretName, err)
	}
	r, err := Renew(c.Clock.Now(), secret.Data, c.Policy)
	if err != nil {
		return time.Time{}, fmt.Errorf("the serving certificate of Secret %s: %w", c.SecretName, err)
	}
	data := secret.Data
	if r.Data != nil {
		data = r.Data
	}
	// Trusted first: kube-apiserver must trust a new CA before the
	// servers, which read the Secret's files, serve what it signs.
	if err := c.trust(ctx, data[CACertKey]); err != nil {
		return time.Time{}, err
	}
	if r.Data == nil {
		return r.Next, nil
	}
	secret.Data = data
	if leaf, err := parse(data); err == nil && leaf.leaf != nil {
		metav1.SetMetaDataAnnotation(&secret.ObjectMeta, NotAfterAnnotation, strconv.FormatInt(leaf.leaf.NotAfter.Unix(), 10))
	}
	callCtx, cancel = context.WithTimeout(ctx, c.CallTimeout)
	defer cancel()
	if _, err := c.Secrets.Update(callCtx, secret, metav1.UpdateOptions{}); err != nil {
		return time.Time{}, fmt.Errorf("writing Secret %s: %w", c.SecretName, err)
	}
	klog.FromContext(ctx).Info("Renewed the serving certificate", "secret", c.SecretName, "what", r.Why, "next", r.Next)
	return r.Next, nil
}

// trust makes bundle the caBundle of the APIService and of the webhook.
func (c *Controller) trust(ctx context.Context, bundle []byte) error {
	if err := c.trustAPIService(ctx, bundle); err != nil {
		return err
	}
	if c.Webhook == "" {
		return nil
	}
	return bridge.SyncCABundle(ctx, c.Webhooks, c.Webhook, bundle, c.CallTimeout)
}

// trustAPIService patches the APIService's caBundle when it differs.
func (c *Controller) trustAPIService(ctx context.Context, bundle []byte) error {
	callCtx, cancel := context.WithTimeout(ctx, c.CallTimeout)
	defer cancel()
	client := c.Dynamic.Resource(apiServices)
	svc, err := client.Get(callCtx, c.APIService, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading APIService %s: %w", c.APIService, err)
	}
	current, _, _ := unstructured.NestedString(svc.Object, "spec", "caBundle")
	if decoded, err := base64.StdEncoding.DecodeString(current); err == nil && bytes.Equal(decoded, bundle) {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"caBundle": bundle}})
	if err != nil {
		return err
	}
	if _, err := client.Patch(callCtx, c.APIService, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("setting the caBundle of APIService %s: %w", c.APIService, err)
	}
	klog.FromContext(ctx).Info("The APIService trusts the serving certificate's CA bundle", "apiService", c.APIService)
	return nil
}
