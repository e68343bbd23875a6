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

// Package servingcert reports the expiry of the certificates a process
// serves, read at each scrape from what it serves now (a certificate
// reloaded from its files, or renewed, included), so that an alert can
// fire before kube-apiserver, a webhook's caller or a scraper stops
// trusting it.
package servingcert

import (
	"crypto/x509"
	"encoding/pem"
	"sync"

	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// Servers of a process, the label of the expiry metric.
const (
	// APIServer is evictionrequest-apiserver's secure port: the API, the
	// eviction API bridge and /metrics.
	APIServer = "apiserver"
	// EvictionBridge is evictionrequest-controller's port of the eviction
	// API bridge.
	EvictionBridge = "eviction-bridge"
	// Metrics is the port of /metrics, /healthz and /readyz of
	// evictionrequest-controller and the surge interceptor.
	Metrics = "metrics"
)

// expiration is the metric's description.
var expiration = metrics.NewDesc("evictionrequest_serving_certificate_expiration_timestamp_seconds",
	"When the serving certificate of each server of the process expires (its not-after, in seconds since the epoch), by server: "+
		"apiserver, eviction-bridge or metrics. Read at each scrape from the certificate served now.",
	[]string{"server"}, nil, metrics.ALPHA, "")

// collector reports the expiry of each registered server's certificate.
type collector struct {
	metrics.BaseStableCollector
	mu      sync.Mutex
	servers map[string]dynamiccertificates.CertKeyContentProvider
}

var (
	registered   = &collector{servers: map[string]dynamiccertificates.CertKeyContentProvider{}}
	registerOnce sync.Once
)

// Register reports the expiry of the certificate cert serves as that of
// server, with the legacy registry; a later call for the same server
// replaces it.
func Register(server string, cert dynamiccertificates.CertKeyContentProvider) {
	registerOnce.Do(func() { legacyregistry.CustomMustRegister(registered) })
	registered.mu.Lock()
	defer registered.mu.Unlock()
	registered.servers[server] = cert
}

// DescribeWithStability describes the metric.
func (c *collector) DescribeWithStability(ch chan<- *metrics.Desc) {
	ch <- expiration
}

// CollectWithStability reports the not-after of each server's leaf
// certificate; a server that serves none yet is left out.
func (c *collector) CollectWithStability(ch chan<- metrics.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for server, provider := range c.servers {
		certPEM, _ := provider.CurrentCertKeyContent()
		leaf, ok := Leaf(certPEM)
		if !ok {
			continue
		}
		ch <- metrics.NewLazyConstMetric(expiration, metrics.GaugeValue, float64(leaf.NotAfter.Unix()), server)
	}
}

// Leaf is the first certificate of a PEM chain, the one a server presents.
func Leaf(chain []byte) (*x509.Certificate, bool) {
	block, _ := pem.Decode(chain)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, false
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	return cert, err == nil
}
