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
	"context"
	"encoding/base64"
	"errors"
	"strconv"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2/ktesting"
	clocktesting "k8s.io/utils/clock/testing"
)

const (
	namespace  = "evictionrequest-system"
	secretName = "evictionrequest-apiserver-tls"
	apiService = "v1alpha1.coordination.k8s.io"
	webhook    = "evictionrequest-eviction-bridge"
)

// Through a CA's renewal the leader writes the caBundles before the
// Secret: after each of its syncs the APIService and the bridge's webhook
// trust both the certificate the servers served before (their files lag
// the Secret) and the one the Secret now holds, and the Secret's not-after
// annotation, which helm upgrade reads, follows the certificate.
func TestTheControllerTrustsBeforeItServes(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	data := chartSecret(t, true)
	kube := fake.NewClientset(
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secretName, Namespace: namespace}, Type: corev1.SecretTypeTLS, Data: data},
		&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: webhook},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "eviction-bridge.example.com",
				ClientConfig: admissionregistrationv1.WebhookClientConfig{CABundle: data[CACertKey]}}}},
	)
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{apiServices: "APIServiceList"}, apiServiceObject(data[CACertKey]))
	clock := clocktesting.NewFakeClock(start)
	c := &Controller{
		Secrets: kube.CoreV1().Secrets(namespace), SecretName: secretName, Dynamic: dyn, APIService: apiService,
		Webhooks: kube.AdmissionregistrationV1().ValidatingWebhookConfigurations(), Webhook: webhook,
		Policy: policy, Clock: clock, CallTimeout: time.Second,
	}
	served := data[CertKey]
	next, err := c.sync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for step := 0; step < 3; step++ {
		clock.SetTime(next)
		if next, err = c.sync(ctx); err != nil {
			t.Fatal(err)
		}
		secret, err := kube.CoreV1().Secrets(namespace).Get(ctx, secretName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, bundle := range [][]byte{apiServiceBundle(ctx, t, c), webhookBundle(ctx, t, c)} {
			trusted(t, map[string][]byte{CACertKey: bundle}, served, secret.Data[CertKey])
		}
		leaf := mustParse(t, secret.Data[CertKey])[0]
		if got := secret.Annotations[NotAfterAnnotation]; got != "" && got != itoa(leaf.NotAfter.Unix()) {
			t.Errorf("the not-after annotation %s, want %d", got, leaf.NotAfter.Unix())
		}
		served = secret.Data[CertKey]
	}
	if leaf := mustParse(t, served)[0]; !leaf.NotAfter.After(start.Add(policy.Validity)) {
		t.Errorf("after three steps the Secret serves a certificate expiring at %s, want a renewed one", leaf.NotAfter)
	}
}

// A leader that cannot change the APIService's caBundle (no RBAC, a
// webhook in the way) changes nothing in the Secret: kube-apiserver never
// meets a certificate of a CA it was not told to trust.
func TestTheControllerServesNothingItCouldNotMakeTrusted(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	data := chartSecret(t, true)
	kube := fake.NewClientset(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secretName, Namespace: namespace}, Type: corev1.SecretTypeTLS, Data: data})
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{apiServices: "APIServiceList"}, apiServiceObject(data[CACertKey]))
	dyn.PrependReactor("patch", "apiservices", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(apiServices.GroupResource(), apiService, errors.New("not allowed"))
	})
	clock := clocktesting.NewFakeClock(start)
	c := &Controller{Secrets: kube.CoreV1().Secrets(namespace), SecretName: secretName, Dynamic: dyn, APIService: apiService,
		Policy: policy, Clock: clock, CallTimeout: time.Second}
	due := start.Add(policy.Validity - policy.RenewBefore)
	for _, now := range []time.Time{due, due.Add(policy.Overlap), due.Add(2 * policy.Overlap)} {
		clock.SetTime(now)
		if _, err := c.sync(ctx); err == nil {
			t.Errorf("at %s: the sync succeeded though the APIService could not be written", now)
		}
		secret, err := kube.CoreV1().Secrets(namespace).Get(ctx, secretName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		trusted(t, map[string][]byte{CACertKey: apiServiceBundle(ctx, t, c)}, secret.Data[CertKey])
		if string(secret.Data[CACertKey]) != string(data[CACertKey]) {
			t.Errorf("at %s: the Secret's CA bundle changed while the APIService's could not", now)
		}
	}
}

// apiServiceObject is the chart's APIService, trusting bundle.
func apiServiceObject(bundle []byte) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": apiService},
		"spec":     map[string]any{"caBundle": base64.StdEncoding.EncodeToString(bundle)},
	}}
}

func apiServiceBundle(ctx context.Context, t *testing.T, c *Controller) []byte {
	t.Helper()
	svc, err := c.Dynamic.Resource(apiServices).Get(ctx, apiService, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	encoded, _, _ := unstructured.NestedString(svc.Object, "spec", "caBundle")
	bundle, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		t.Fatal(err)
	}
	return bundle
}

func webhookBundle(ctx context.Context, t *testing.T, c *Controller) []byte {
	t.Helper()
	config, err := c.Webhooks.Get(ctx, webhook, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return config.Webhooks[0].ClientConfig.CABundle
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
