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
	"net"
	"strconv"

	"github.com/spf13/pflag"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	netutils "k8s.io/utils/net"

	"github.com/evictionrequest/apiserver/pkg/controllermanager"
	"github.com/evictionrequest/apiserver/pkg/util/servingcert"
)

// MetricsServingOptions configure where and to whom a component that is
// not an API server serves /metrics, /healthz and /readyz: over HTTPS,
// with the certificate of --metrics-tls-cert-file or a self-signed one,
// /metrics to callers kube-apiserver authenticates and authorizes (`get` on
// the non-resource URL /metrics), as kube-controller-manager serves its
// own; the health checks to anyone (--authorization-always-allow-paths).
type MetricsServingOptions struct {
	// BindAddress is host:port; "0" serves nothing.
	BindAddress    string
	SecureServing  *genericoptions.SecureServingOptions
	Authentication *genericoptions.DelegatingAuthenticationOptions
	Authorization  *genericoptions.DelegatingAuthorizationOptions
}

// NewMetricsServingOptions returns the defaults: port 8080 on every
// address, a self-signed certificate kept in memory (the containers' root
// file system is read-only), authentication and authorization delegated
// to the cluster the process runs in, kube-controller-manager's
// always-allowed paths and groups.
func NewMetricsServingOptions() *MetricsServingOptions {
	ss := genericoptions.NewSecureServingOptions()
	ss.ServerCert.CertDirectory = ""
	ss.ServerCert.PairName = "metrics"
	return &MetricsServingOptions{
		BindAddress:    ":8080",
		SecureServing:  ss,
		Authentication: genericoptions.NewDelegatingAuthenticationOptions(),
		Authorization:  genericoptions.NewDelegatingAuthorizationOptions(),
	}
}

// AddFlags adds the flags of the metrics server to fs, and those of its
// delegated authentication and authorization to auth.
func (o *MetricsServingOptions) AddFlags(fs, auth *pflag.FlagSet) {
	fs.StringVar(&o.BindAddress, "metrics-bind-address", o.BindAddress,
		"Address (host:port) of /metrics, /healthz and /readyz, served over HTTPS; \"0\" serves none. "+
			"/metrics is served to callers kube-apiserver authenticates and authorizes to get the non-resource URL /metrics; "+
			"--authorization-always-allow-paths to anyone.")
	fs.StringVar(&o.SecureServing.ServerCert.CertKey.CertFile, "metrics-tls-cert-file", o.SecureServing.ServerCert.CertKey.CertFile,
		"Serving certificate (PEM, reloaded when it changes) of --metrics-bind-address; a self-signed one, made at start, when empty.")
	fs.StringVar(&o.SecureServing.ServerCert.CertKey.KeyFile, "metrics-tls-private-key-file", o.SecureServing.ServerCert.CertKey.KeyFile,
		"Private key of --metrics-tls-cert-file.")
	o.Authentication.AddFlags(auth)
	o.Authorization.AddFlags(auth)
}

// Validate checks the options.
func (o *MetricsServingOptions) Validate() []error {
	if o.BindAddress == "0" {
		return nil
	}
	var errs []error
	if _, _, err := splitBindAddress(o.BindAddress); err != nil {
		errs = append(errs, err)
	}
	if (o.SecureServing.ServerCert.CertKey.CertFile == "") != (o.SecureServing.ServerCert.CertKey.KeyFile == "") {
		errs = append(errs, errors.New("--metrics-tls-cert-file and --metrics-tls-private-key-file go together: set both or neither"))
	}
	errs = append(errs, o.Authentication.Validate()...)
	return append(errs, o.Authorization.Validate()...)
}

// splitBindAddress is the IP and port of --metrics-bind-address.
func splitBindAddress(address string) (net.IP, int, error) {
	host, portText, err := net.SplitHostPort(address)
	if err != nil {
		return nil, 0, fmt.Errorf("--metrics-bind-address %q: %w", address, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 0 || port > 65535 {
		return nil, 0, fmt.Errorf("--metrics-bind-address %q: the port must be a number from 0 to 65535", address)
	}
	if host == "" {
		return net.IPv4zero, port, nil
	}
	ip := netutils.ParseIPSloppy(host)
	if ip == nil {
		return nil, 0, fmt.Errorf("--metrics-bind-address %q: the host must be an IP address", address)
	}
	return ip, port, nil
}

// MetricsServer listens on --metrics-bind-address and builds the metrics
// server, its self-signed certificate (for the host names hosts) when no
// certificate is given, and its delegated authentication and
// authorization, with kubeconfig (in-cluster when empty) unless
// --authentication-kubeconfig and --authorization-kubeconfig say
// otherwise. Nil when it serves nothing.
func (o *MetricsServingOptions) MetricsServer(kubeconfig string, hosts []string) (*controllermanager.MetricsServer, error) {
	if o.BindAddress == "0" {
		return nil, nil
	}
	ip, port, err := splitBindAddress(o.BindAddress)
	if err != nil {
		return nil, err
	}
	o.SecureServing.BindAddress, o.SecureServing.BindPort = ip, port
	if o.Authentication.RemoteKubeConfigFile == "" {
		o.Authentication.RemoteKubeConfigFile = kubeconfig
	}
	if o.Authorization.RemoteKubeConfigFile == "" {
		o.Authorization.RemoteKubeConfigFile = kubeconfig
	}
	if err := o.SecureServing.MaybeDefaultWithSelfSignedCerts("localhost", hosts, []net.IP{netutils.ParseIPSloppy("127.0.0.1")}); err != nil {
		return nil, fmt.Errorf("the self-signed certificate of --metrics-bind-address: %w", err)
	}
	s := &controllermanager.MetricsServer{}
	if err := o.SecureServing.ApplyTo(&s.Serving); err != nil {
		return nil, fmt.Errorf("--metrics-bind-address: %w", err)
	}
	if err := o.Authentication.ApplyTo(&s.Authentication, s.Serving, nil); err != nil {
		return nil, err
	}
	if err := o.Authorization.ApplyTo(&s.Authorization); err != nil {
		return nil, err
	}
	servingcert.Register(servingcert.Metrics, s.Serving.Cert)
	return s, nil
}
