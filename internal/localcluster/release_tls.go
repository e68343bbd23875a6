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
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// servingTrust is how the harness verifies our server's serving
// certificate: the CA that issued it and a name it holds. By default the
// cluster's own PKI, whose certificate names localhost; a helm release
// whose chart generated the certificate (apiserver.servingCertificate.mode
// generated) brings its own, for the Service's name.
type servingTrust struct {
	caPEM      []byte
	serverName string
	// certFile and keyFile are the release's certificate, which the
	// server's processes serve; empty for the cluster's own.
	certFile, keyFile string
}

// trust is the cluster's servingTrust.
func (c *Cluster) trust() servingTrust {
	if c.release != nil && c.release.serving != nil {
		return *c.release.serving
	}
	return servingTrust{caPEM: c.pki.servingCA.certPEM(), serverName: "localhost"}
}

// servingClient is an anonymous HTTPS client that trusts the serving
// certificate of our server, for its health endpoints.
func (c *Cluster) servingClient() *http.Client {
	trust := c.trust()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(trust.caPEM)
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: trust.serverName}}}
}

// releaseServingCert is the serving certificate the release's Deployment
// mounts, as a pod would read it, when the Secret it mounts exists: what
// the chart generated. nil when the Secret does not exist (a user's
// Secret, which the harness's own certificate stands in for).
func (c *Cluster) releaseServingCert(ctx context.Context) (*servingTrust, error) {
	obj, err := c.manifest("Deployment", serverName)
	if err != nil {
		return nil, err
	}
	var dep appsv1.Deployment
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &dep); err != nil {
		return nil, err
	}
	secretName, certPath, keyPath := mountedSecretOf(&dep, "--tls-cert-file=", "--tls-private-key-file=")
	if secretName == "" {
		return nil, nil
	}
	secret, err := c.Client.CoreV1().Secrets(dep.Namespace).Get(ctx, secretName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	dir := c.path(serverName + "-release-tls")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	trust := &servingTrust{caPEM: secret.Data["ca.crt"], serverName: fmt.Sprintf("%s.%s.svc", serverName, dep.Namespace),
		certFile: filepath.Join(dir, "tls.crt"), keyFile: filepath.Join(dir, "tls.key")}
	for file, key := range map[string]string{trust.certFile: filepath.Base(certPath), trust.keyFile: filepath.Base(keyPath)} {
		if len(secret.Data[key]) == 0 {
			return nil, fmt.Errorf("the Secret %s/%s has no %s", dep.Namespace, secretName, key)
		}
		if err := os.WriteFile(file, secret.Data[key], 0o600); err != nil {
			return nil, err
		}
	}
	return trust, nil
}

// mountedSecretOf is the Secret of the volume that the first container of
// dep mounts where its certFlag and keyFlag point, with those paths; ""
// when they are not both in one Secret's volume.
func mountedSecretOf(dep *appsv1.Deployment, certFlag, keyFlag string) (secret, certPath, keyPath string) {
	spec := dep.Spec.Template.Spec
	if len(spec.Containers) == 0 {
		return "", "", ""
	}
	for _, arg := range spec.Containers[0].Args {
		if v, ok := strings.CutPrefix(arg, certFlag); ok {
			certPath = v
		}
		if v, ok := strings.CutPrefix(arg, keyFlag); ok {
			keyPath = v
		}
	}
	if certPath == "" || filepath.Dir(certPath) != filepath.Dir(keyPath) {
		return "", "", ""
	}
	for _, m := range spec.Containers[0].VolumeMounts {
		if filepath.Clean(m.MountPath) != filepath.Dir(certPath) {
			continue
		}
		for _, v := range spec.Volumes {
			if v.Name == m.Name && v.Secret != nil {
				return v.Secret.SecretName, certPath, keyPath
			}
		}
	}
	return "", "", ""
}
