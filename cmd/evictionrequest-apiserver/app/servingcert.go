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

package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/evictionrequest/apiserver/pkg/apiserver"
	"github.com/evictionrequest/apiserver/pkg/cmd/options"
	"github.com/evictionrequest/apiserver/pkg/controller/servingcert"
	"github.com/evictionrequest/apiserver/pkg/controllermanager"
)

// ServingCertificateOptions configure the renewal of the serving
// certificate the chart generates (apiserver.servingCertificate.mode
// generated) by the controllers' leader, in its Secret, with the caBundle of
// the APIService (and of the eviction API bridge's webhook) kept equal to
// the Secret's CA bundle.
type ServingCertificateOptions struct {
	// Secret is the Secret of the install namespace the servers mount;
	// empty renews nothing.
	Secret     string
	APIService string
	Validity   time.Duration
	// RenewBefore and CAOverlap: see servingcert.Policy.
	RenewBefore time.Duration
	CAOverlap   time.Duration
}

// NewServingCertificateOptions returns the defaults: off; once on, the
// chart's year of validity renewed 30 days ahead.
func NewServingCertificateOptions() *ServingCertificateOptions {
	return &ServingCertificateOptions{
		APIService:  "v1alpha1.coordination.k8s.io",
		Validity:    365 * 24 * time.Hour,
		RenewBefore: 30 * 24 * time.Hour,
		CAOverlap:   5 * time.Minute,
	}
}

// AddFlags adds the flags to fs.
func (o *ServingCertificateOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Secret, "serving-certificate-secret", o.Secret,
		"Secret (tls.crt, tls.key, ca.crt, ca.key) of the install namespace whose serving certificate, and the CA that signs it, the controllers' leader renews before they expire; "+
			"the servers serve it from the Secret's files (--tls-cert-file), which kubelet updates. Empty renews nothing (a certificate of cert-manager or of your own).")
	fs.StringVar(&o.APIService, "serving-certificate-apiservice", o.APIService,
		"APIService whose caBundle the leader keeps equal to the CA bundle of --serving-certificate-secret, a new CA added before a certificate it signed is served.")
	fs.DurationVar(&o.Validity, "serving-certificate-validity", o.Validity, "Validity of a renewed serving certificate, and of a new CA.")
	fs.DurationVar(&o.RenewBefore, "serving-certificate-renew-before", o.RenewBefore, "How long before its expiry the serving certificate (or its CA) is renewed.")
	fs.DurationVar(&o.CAOverlap, "serving-certificate-ca-overlap", o.CAOverlap,
		"How long a new CA is trusted (the caBundles, the Secret's ca.crt) before the serving certificate it signs replaces the old one: longer than kubelet takes to update a mounted Secret.")
}

// policy is the renewal policy of the options, for the server's names.
func (o *ServingCertificateOptions) policy() servingcert.Policy {
	return servingcert.Policy{Validity: o.Validity, RenewBefore: o.RenewBefore, Overlap: o.CAOverlap,
		DNSNames: serviceDNSNames(options.InstallNamespace())}
}

// Validate checks the options; the renewal runs on the controllers' leader.
func (o *ServingCertificateOptions) Validate(controllers bool) []error {
	if o.Secret == "" {
		return nil
	}
	var errs []error
	if err := o.policy().Validate(); err != nil {
		errs = append(errs, fmt.Errorf("--serving-certificate-validity, --serving-certificate-renew-before, --serving-certificate-ca-overlap: %w", err))
	}
	if o.APIService == "" {
		errs = append(errs, errors.New("--serving-certificate-secret needs --serving-certificate-apiservice"))
	}
	if !controllers {
		errs = append(errs, errors.New("--serving-certificate-secret needs the server's controllers (--controllers=* or a name): their leader renews the certificate"))
	}
	return errs
}

// applyServingCertificate adds the renewer to the controllers, keeping the
// bridge's webhook too when the server serves the bridge.
func applyServingCertificate(o *ServingCertificateOptions, bridge *options.BridgeOptions, config *apiserver.Config, controllers *ControllerOptions) error {
	m := config.ExtraConfig.Controllers
	if o.Secret == "" || m == nil {
		return nil
	}
	dyn, err := dynamic.NewForConfig(rest.AddUserAgent(controllers.Client.ApplyTo(config.GenericConfig.ClientConfig), componentName))
	if err != nil {
		return err
	}
	webhook := ""
	if bridge.Enabled {
		webhook = bridge.WebhookConfiguration
	}
	m.Controllers = append(m.Controllers, controllermanager.Descriptor{
		Name: servingcert.ControllerName, Enabled: true,
		Init: func(_ context.Context, cc *controllermanager.Context) (controllermanager.Controller, error) {
			c := &servingcert.Controller{
				Secrets: cc.Client.CoreV1().Secrets(options.InstallNamespace()), SecretName: o.Secret,
				Dynamic: dyn, APIService: o.APIService,
				Webhooks: cc.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations(), Webhook: webhook,
				Policy: o.policy(), Clock: cc.Clock, CallTimeout: controllers.Client.CallTimeout,
			}
			return controllermanager.RunFunc(c.Run), nil
		},
	})
	return nil
}
