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
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"
)

// DefaultNamespaceSelector selects the namespaces that opted in, as the
// eviction-bridge components' webhook does.
var DefaultNamespaceSelector = labels.SelectorFromSet(labels.Set{NamespaceLabel: NamespaceOptIn})

// optedIn is true when evictions in namespace are the bridge's to answer:
// the namespace matches the namespaceSelector of the bridge's own webhook
// (Config.WebhookConfiguration), as kube-apiserver matches it before it
// calls the bridge, else DefaultNamespaceSelector. kube-apiserver's match
// does not hold for a call that did not come from kube-apiserver, so the
// bridge matches again: a review of an eviction elsewhere is answered
// "allowed" and writes nothing, whoever sends it.
func (b *Bridge) optedIn(ctx context.Context, namespace string) (bool, error) {
	selectors, err := b.namespaceSelectors(ctx)
	if err != nil {
		return false, err
	}
	ns, err := b.namespace(ctx, namespace)
	if err != nil || ns == nil {
		return false, err
	}
	for _, selector := range selectors {
		if selector.Matches(labels.Set(ns.Labels)) {
			return true, nil
		}
	}
	return false, nil
}

// namespaceSelectors are the namespaceSelectors of the webhooks of the
// bridge's configuration, or DefaultNamespaceSelector when the bridge was
// not told its name. A configuration the cache misses is read live (it may
// be new); one that does not exist is an error, not "nothing opted in":
// something calls the bridge, so the flag names the wrong configuration,
// and answering "allowed" would turn the bridge off without a word.
func (b *Bridge) namespaceSelectors(ctx context.Context) ([]labels.Selector, error) {
	name := b.cfg.WebhookConfiguration
	if name == "" {
		return []labels.Selector{DefaultNamespaceSelector}, nil
	}
	config, err := b.webhooks.Get(name)
	if apierrors.IsNotFound(err) {
		callCtx, cancel := context.WithTimeout(ctx, b.cfg.CallTimeout)
		defer cancel()
		config, err = b.cfg.Kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(callCtx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("ValidatingWebhookConfiguration %q, which --eviction-bridge-webhook-configuration names, does not exist: "+
				"the bridge cannot tell which namespaces opted in", name)
		}
	}
	if err != nil {
		return nil, err
	}
	var selectors []labels.Selector
	for _, webhook := range config.Webhooks {
		if webhook.NamespaceSelector == nil {
			// A webhook without a selector is called for every namespace.
			selectors = append(selectors, labels.Everything())
			continue
		}
		selector, err := metav1.LabelSelectorAsSelector(webhook.NamespaceSelector)
		if err != nil {
			return nil, fmt.Errorf("the namespaceSelector of webhook %q of %s: %w", webhook.Name, config.Name, err)
		}
		selectors = append(selectors, selector)
	}
	return selectors, nil
}

// namespace reads the namespace from the cache, or from kube-apiserver when
// the cache misses it; nil when it does not exist.
func (b *Bridge) namespace(ctx context.Context, name string) (*corev1.Namespace, error) {
	ns, err := b.namespaces.Get(name)
	if err == nil {
		return ns, nil
	}
	if !apierrors.IsNotFound(err) {
		return nil, err
	}
	callCtx, cancel := context.WithTimeout(ctx, b.cfg.CallTimeout)
	defer cancel()
	ns, err = b.cfg.Kube.CoreV1().Namespaces().Get(callCtx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		klog.FromContext(ctx).V(2).Info("An eviction in a namespace that does not exist", "namespace", name)
		return nil, nil
	}
	return ns, err
}
