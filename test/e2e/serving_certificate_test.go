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

package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/utils/clock"

	"github.com/evictionrequest/apiserver/internal/pki"
	"github.com/evictionrequest/apiserver/pkg/controller/servingcert"
	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// kubeletLag is how long the stand-in for kubelet takes to show a changed
// Secret in the server's files; the CA overlap is longer, as kubelet's
// minute is shorter than the default 5 minutes.
const kubeletLag = 5 * time.Second

var apiServicesResource = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// The renewer takes over a Secret the chart wrote (without the key of its
// CA), puts a CA of its own beside the old one and then serves a
// certificate of it, while kube-apiserver's aggregator keeps reaching the
// APIService's server: every call through kube-apiserver, each on a new
// TLS connection, succeeds through the renewal, with the server's files
// lagging the Secret as kubelet's do.
func TestTheServingCertificateIsRenewedWithoutDowntime(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	group := ns + ".servingcert.e2e.example.com"
	dnsName := "backend." + ns + ".svc"

	data := chartGeneratedSecret(t, dnsName)
	secrets := f.Kube.CoreV1().Secrets(ns)
	if _, err := secrets.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "backend-tls"}, Type: corev1.SecretTypeTLS, Data: data}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	served := &atomic.Pointer[tls.Certificate]{}
	port := serveDiscovery(t, group, served)
	setServed(t, served, data)
	go mirrorSecret(ctx, t, secrets, "backend-tls", served)
	registerAPIService(t, ns, group, port, data[servingcert.CACertKey])

	path := "/apis/" + group + "/v1"
	throughKubeAPIServer := func(ctx context.Context) error {
		_, err := f.Kube.Discovery().RESTClient().Get().AbsPath(path).DoRaw(ctx)
		return err
	}
	framework.Eventually(t, 2*time.Minute, "kube-apiserver to reach the APIService's server", throughKubeAPIServer)
	initial := served.Load().Leaf

	renewer := &servingcert.Controller{
		Secrets: secrets, SecretName: "backend-tls", Dynamic: f.Dynamic, APIService: "v1." + group,
		Policy: servingcert.Policy{Validity: 10 * time.Minute, RenewBefore: 4 * time.Minute, Overlap: 20 * time.Second, DNSNames: []string{dnsName}},
		Clock:  clock.RealClock{}, CallTimeout: 10 * time.Second,
	}
	renewed, stop := context.WithCancel(ctx)
	defer stop()
	go func() { _ = renewer.Run(renewed) }()

	// Calls until the renewed certificate has been served for a while.
	deadline := time.Now().Add(2 * time.Minute)
	var failures []error
	var changedAt time.Time
	for time.Now().Before(deadline) && (changedAt.IsZero() || time.Since(changedAt) < 15*time.Second) {
		if err := throughKubeAPIServer(ctx); err != nil {
			failures = append(failures, fmt.Errorf("%s: %w", time.Now().Format(time.TimeOnly), err))
		}
		if changedAt.IsZero() && !served.Load().Leaf.Equal(initial) {
			changedAt = time.Now()
		}
		time.Sleep(500 * time.Millisecond)
	}
	if len(failures) > 0 {
		t.Errorf("%d calls through kube-apiserver failed during the renewal: %v", len(failures), errors.Join(failures...))
	}
	if leaf := served.Load().Leaf; leaf.Equal(initial) {
		t.Fatal("the server still serves the chart's certificate two minutes after the renewer started")
	}
	secret, err := secrets.Get(ctx, "backend-tls", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cas, err := certutil.ParseCertsPEM(secret.Data[servingcert.CACertKey])
	if err != nil || len(cas) != 2 || len(secret.Data[servingcert.CAKeyKey]) == 0 {
		t.Errorf("the Secret after the renewal: %d CAs (%v), CA key %v; want the new CA and the chart's, and the new one's key", len(cas), err, len(secret.Data[servingcert.CAKeyKey]) > 0)
	}
	if got, want := secret.Annotations[servingcert.NotAfterAnnotation], strconv.FormatInt(served.Load().Leaf.NotAfter.Unix(), 10); got != want {
		t.Errorf("the Secret's not-after annotation %q, want %q", got, want)
	}
}

// chartGeneratedSecret is a Secret as the chart's earlier versions wrote
// it: a CA and a serving certificate of it for dnsName, without the CA's key.
func chartGeneratedSecret(t *testing.T, dnsName string) map[string][]byte {
	t.Helper()
	ca, err := pki.NewAuthority("chart-generated-ca")
	if err != nil {
		t.Fatal(err)
	}
	pair, err := ca.Sign(pki.Request{CommonName: dnsName, DNSNames: []string{dnsName}, Usage: x509.ExtKeyUsageServerAuth, Validity: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return map[string][]byte{servingcert.CACertKey: ca.CertPEM(), servingcert.CertKey: pair.CertPEM, servingcert.KeyKey: pair.KeyPEM}
}

// setServed makes the certificate of data the one served.
func setServed(t testing.TB, served *atomic.Pointer[tls.Certificate], data map[string][]byte) {
	t.Helper()
	cert, err := tls.X509KeyPair(data[servingcert.CertKey], data[servingcert.KeyKey])
	if err != nil {
		t.Error(err)
		return
	}
	served.Store(&cert)
}

// mirrorSecret shows the Secret's certificate to the server kubeletLag
// after it changes, as kubelet updates a mounted Secret, until ctx ends.
func mirrorSecret(ctx context.Context, t testing.TB, secrets interface {
	Get(context.Context, string, metav1.GetOptions) (*corev1.Secret, error)
}, name string, served *atomic.Pointer[tls.Certificate]) {
	var last string
	for ctx.Err() == nil {
		secret, err := secrets.Get(ctx, name, metav1.GetOptions{})
		if err == nil && string(secret.Data[servingcert.CertKey]) != last {
			last = string(secret.Data[servingcert.CertKey])
			select {
			case <-ctx.Done():
				return
			case <-time.After(kubeletLag):
			}
			setServed(t, served, secret.Data)
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// serveDiscovery serves the discovery of group/v1 (no resources) over TLS
// with the certificate served holds, a new connection per call, on a
// loopback port it returns.
func serveDiscovery(t *testing.T, group string, served *atomic.Pointer[tls.Certificate]) int {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/apis/"+group+"/v1", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"%s/v1","resources":[]}`, group)
	})
	server := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, TLSConfig: &tls.Config{
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return served.Load(), nil },
	}}
	server.SetKeepAlivesEnabled(false)
	go func() { _ = server.ServeTLS(listener, "", "") }()
	t.Cleanup(func() { _ = server.Close() })
	return listener.Addr().(*net.TCPAddr).Port
}

// registerAPIService points the APIService v1.group at the server on port,
// through an ExternalName Service to localhost (loopback addresses are
// invalid in Endpoints), trusting caBundle; both go when the test ends.
func registerAPIService(t *testing.T, ns, group string, port int, caBundle []byte) {
	t.Helper()
	ctx := t.Context()
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "backend"}, Spec: corev1.ServiceSpec{
		Type: corev1.ServiceTypeExternalName, ExternalName: "localhost", Ports: []corev1.ServicePort{{Name: "https", Port: int32(port)}}}}
	if _, err := f.Kube.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	name := "v1." + group
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": map[string]any{"name": name},
		"spec": map[string]any{"group": group, "version": "v1", "groupPriorityMinimum": int64(1000), "versionPriority": int64(15),
			"service":  map[string]any{"namespace": ns, "name": "backend", "port": int64(port)},
			"caBundle": base64.StdEncoding.EncodeToString(caBundle)},
	}}
	if _, err := f.Dynamic.Resource(apiServicesResource).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = f.Dynamic.Resource(apiServicesResource).Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}
