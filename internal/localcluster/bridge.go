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

package localcluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/evictionrequest/apiserver/pkg/bridge"
)

// BridgeCaller is who a client of the eviction API bridge claims to be by
// its client certificate.
type BridgeCaller int

const (
	// NoCertificate presents none: anyone who reaches the port.
	NoCertificate BridgeCaller = iota
	// ClusterAdmin presents the admin's certificate, which the cluster's
	// client CA signed: a user of the cluster, not kube-apiserver.
	ClusterAdmin
	// KubeAPIServer presents kube-apiserver's client certificate for the
	// bridge, from its admission configuration.
	KubeAPIServer
)

// BridgeClient is an HTTPS client of the eviction API bridge that trusts
// its serving certificate and presents the certificate of caller.
func (c *Cluster) BridgeClient(caller BridgeCaller) (*http.Client, error) {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(c.pki.servingCA.certPEM())
	config := &tls.Config{RootCAs: pool, ServerName: "localhost"}
	var pair *keyPair
	switch caller {
	case ClusterAdmin:
		pair = c.pki.admin
	case KubeAPIServer:
		pair = c.pki.bridgeClient
	}
	if pair != nil {
		cert, err := tls.X509KeyPair(pair.CertPEM, pair.KeyPEM)
		if err != nil {
			return nil, err
		}
		config.Certificates = []tls.Certificate{cert}
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: config}}, nil
}

// BridgeURL is where kube-apiserver calls the eviction API bridge: the
// local port its ValidatingWebhookConfiguration names.
func (c *Cluster) BridgeURL(ctx context.Context, configuration string) (string, error) {
	config, err := c.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, configuration, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	for _, w := range config.Webhooks {
		if s := w.ClientConfig.Service; s != nil && s.Port != nil && s.Path != nil && *s.Path == bridge.Path {
			return fmt.Sprintf("%s%s", loopbackURL("https", int(*s.Port)), *s.Path), nil
		}
	}
	return "", errors.New("no webhook of " + configuration + " calls the eviction API bridge")
}
