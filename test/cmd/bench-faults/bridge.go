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

package main

import (
	"context"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/bridge"
)

// bridgeFailurePolicy is the failurePolicy the campaign runs the eviction
// API bridge's webhook with (localcluster.Config.BridgeFailurePolicy): the
// checker's "no pod ended while a participant held its turn" is what the
// bridge promises under Fail; under Ignore a call in flight to a replica
// the campaign kills fails open and lets the eviction through.
const bridgeFailurePolicy = admissionregistrationv1.Fail

// checkBridgePolicy fails unless kube-apiserver holds the bridge's webhook
// with policy: the campaign checks the live configuration, not the one it
// asked the harness for.
func checkBridgePolicy(ctx context.Context, client kubernetes.Interface, policy admissionregistrationv1.FailurePolicyType) error {
	configs, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, config := range configs.Items {
		for _, webhook := range config.Webhooks {
			if webhook.Name != bridge.WebhookName {
				continue
			}
			if webhook.FailurePolicy == nil || *webhook.FailurePolicy != policy {
				return fmt.Errorf("the webhook %s of %s has failurePolicy %s, want %s", webhook.Name, config.Name, ptr.Deref(webhook.FailurePolicy, "unset"), policy)
			}
			return nil
		}
	}
	return fmt.Errorf("no ValidatingWebhookConfiguration has the webhook %s", bridge.WebhookName)
}
