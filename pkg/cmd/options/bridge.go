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

package options

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/evictionrequest/apiserver/pkg/bridge"
)

// BridgeOptions configure the eviction API bridge evictionrequest-apiserver
// and evictionrequest-controller can serve: admission on pods/eviction that
// sends the evictions of pods with interceptors or responders through
// EvictionRequests.
type BridgeOptions struct {
	// Enabled serves the bridge: decided by --controllers (Complete).
	Enabled bool
	// Inactivity is how long the bridge keeps its request without an
	// eviction of the pod reaching it.
	Inactivity time.Duration
	// RetryAfter is the Retry-After of its refusals.
	RetryAfter time.Duration
	// ExemptUsers are user names whose evictions pass untouched, besides
	// those the webhook configuration's matchConditions exempt.
	ExemptUsers []string
	// WebhookConfiguration, when set, is the ValidatingWebhookConfiguration
	// whose caBundle the server keeps equal to the CA of its serving
	// certificate: CAFile, else ca.crt beside --tls-cert-file, else the
	// self-signed certificate's own bundle. Its namespaceSelector is the
	// one the bridge applies.
	WebhookConfiguration, CAFile string
	// ClientCAFile is the CA of the client certificate kube-apiserver
	// presents to the webhook; AllowedNames its common names (any when
	// empty).
	ClientCAFile string
	AllowedNames []string
	// AllowUnauthenticatedCallers serves the bridge without ClientCAFile,
	// to any caller that reaches its port: an admin's explicit choice, for
	// a cluster whose kube-apiserver cannot be given a client certificate
	// for webhooks. Without either the bridge does not start.
	AllowUnauthenticatedCallers bool
}

// AllowUnauthenticatedCallersFlag names the flag that lets the bridge
// serve without --eviction-bridge-client-ca-file.
const AllowUnauthenticatedCallersFlag = "eviction-bridge-allow-unauthenticated-callers"

// NewBridgeOptions returns the defaults: off.
func NewBridgeOptions() *BridgeOptions {
	return &BridgeOptions{Inactivity: bridge.DefaultInactivity, RetryAfter: bridge.DefaultRetryAfter}
}

// AddFlags adds the bridge's flags to fs.
func (o *BridgeOptions) AddFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&o.Inactivity, "eviction-bridge-inactivity-timeout", o.Inactivity,
		"How long the bridge keeps its request for a pod once no eviction of it reaches the bridge: then it withdraws.")
	fs.DurationVar(&o.RetryAfter, "eviction-bridge-retry-after", o.RetryAfter, "Retry-After of the bridge's 429 answers.")
	fs.StringSliceVar(&o.ExemptUsers, "eviction-bridge-exempt-users", o.ExemptUsers,
		"User names whose evictions the bridge lets through untouched (the webhook's matchConditions are the first place for this).")
	fs.StringVar(&o.WebhookConfiguration, "eviction-bridge-webhook-configuration", o.WebhookConfiguration,
		"ValidatingWebhookConfiguration whose caBundle the server keeps equal to the CA of its serving certificate, so that kube-apiserver trusts the bridge however the certificate was issued. "+
			"The bridge also applies its webhooks' namespaceSelector itself; without this flag, it acts in namespaces labelled "+bridge.NamespaceLabel+"="+bridge.NamespaceOptIn+" only.")
	fs.StringVar(&o.ClientCAFile, "eviction-bridge-client-ca-file", o.ClientCAFile,
		"CA bundle (PEM, reloaded when it changes) of the client certificate kube-apiserver presents to the bridge, as its admission configuration sets it (the ValidatingAdmissionWebhook plugin's kubeConfigFile). "+
			"Calls without a certificate of this CA get 401 before their body is read. Required with --enable-eviction-bridge, unless --"+AllowUnauthenticatedCallersFlag+" is set.")
	fs.BoolVar(&o.AllowUnauthenticatedCallers, AllowUnauthenticatedCallersFlag, o.AllowUnauthenticatedCallers,
		"INSECURE: serve the eviction API bridge without --eviction-bridge-client-ca-file, to any caller that reaches its port, which can then have the bridge "+
			"request, with its own rights, the eviction of pods with interceptors (responders) in the namespaces that opted in. "+
			"Only for a cluster whose kube-apiserver cannot present a client certificate to webhooks, and whose network keeps every other caller away from the port.")
	fs.StringSliceVar(&o.AllowedNames, "eviction-bridge-allowed-names", o.AllowedNames,
		"Common names of kube-apiserver's client certificate, of --eviction-bridge-client-ca-file; a certificate of another name gets 403. Empty accepts any the CA signed.")
	fs.StringVar(&o.CAFile, "eviction-bridge-ca-file", o.CAFile,
		"CA of the serving certificate, for --eviction-bridge-webhook-configuration; default: ca.crt beside --tls-cert-file, else the self-signed certificate's bundle.")
}

// Validate checks the options.
func (o *BridgeOptions) Validate() []error {
	if !o.Enabled {
		return nil
	}
	var errs []error
	if o.Inactivity < 10*time.Second {
		errs = append(errs, fmt.Errorf("--eviction-bridge-inactivity-timeout must be at least 10s (clients retry every few seconds), got %s", o.Inactivity))
	}
	if o.RetryAfter < time.Second {
		errs = append(errs, fmt.Errorf("--eviction-bridge-retry-after must be at least 1s, got %s", o.RetryAfter))
	}
	if len(o.AllowedNames) > 0 && o.ClientCAFile == "" {
		errs = append(errs, errors.New("--eviction-bridge-allowed-names needs --eviction-bridge-client-ca-file"))
	}
	switch {
	case o.ClientCAFile == "" && !o.AllowUnauthenticatedCallers:
		errs = append(errs, errors.New("the eviction API bridge (--controllers=eviction-bridge) needs --eviction-bridge-client-ca-file, the CA of the client certificate kube-apiserver presents to the bridge "+
			"(its admission configuration, docs/eviction-bridge.md), so that the bridge serves kube-apiserver only; "+
			"or, to serve any caller that reaches its port, --"+AllowUnauthenticatedCallersFlag))
	case o.ClientCAFile != "" && o.AllowUnauthenticatedCallers:
		errs = append(errs, errors.New("--"+AllowUnauthenticatedCallersFlag+" contradicts --eviction-bridge-client-ca-file: give one of them"))
	}
	return errs
}

// WebhookCAFile is the CA the caBundle of
// --eviction-bridge-webhook-configuration is kept equal to: CAFile, else
// ca.crt beside the serving certificate certFile, else certFile itself (a
// self-signed certificate's file bundles its CA).
func (o *BridgeOptions) WebhookCAFile(certFile string) string {
	if o.CAFile != "" {
		return o.CAFile
	}
	caFile := filepath.Join(filepath.Dir(certFile), "ca.crt")
	if _, err := os.Stat(caFile); err != nil {
		return certFile
	}
	return caFile
}
