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
	"crypto/tls"
	"net/http"
)

// metricsClient reads the /metrics our workloads serve over HTTPS, as a
// scraper kube-apiserver authorizes: it presents the admin's client
// certificate, which their delegated authentication knows (kube-apiserver's
// client CA, from kube-system/extension-apiserver-authentication) and
// their authorization lets through (system:masters). Their serving
// certificate is the self-signed one they make at start, as in the chart's
// pods, so it is not verified.
func (c *Cluster) metricsClient() (*http.Client, error) {
	cert, err := tls.X509KeyPair(c.pki.admin.CertPEM, c.pki.admin.KeyPEM)
	if err != nil {
		return nil, err
	}
	config := &tls.Config{Certificates: []tls.Certificate{cert}, InsecureSkipVerify: true} //nolint:gosec // loopback, a self-signed certificate
	return &http.Client{Transport: &http.Transport{TLSClientConfig: config}}, nil
}

// probeClient reads /healthz and /readyz of our workloads as kubelet's
// probes do: over HTTPS, anonymous, without verifying the certificate.
var probeClient = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // loopback, a self-signed certificate
