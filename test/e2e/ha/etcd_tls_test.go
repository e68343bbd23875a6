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

package ha

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestEtcdServesOnlyClientsWithItsCertificate: the server's etcd, as the ha
// overlay runs it, speaks TLS and answers a client with a certificate of
// its CA, and refuses one without a certificate and one that speaks plain
// HTTP.
func TestEtcdServesOnlyClientsWithItsCertificate(t *testing.T) {
	t.Parallel()
	member := f.ServerEtcd()[0]
	if member.TLS == nil || !strings.HasPrefix(member.ClientURL, "https://") {
		t.Fatalf("etcd member %s serves %s without TLS", member.Name, member.ClientURL)
	}
	get := func(client *http.Client, url string) error {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/version", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s", resp.Status)
		}
		return nil
	}
	if err := get(member.HTTPClient(), member.ClientURL); err != nil {
		t.Errorf("a client with etcd's certificate: %v", err)
	}
	noCert := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: member.TLS.RootCAs, MinVersion: tls.VersionTLS12}}}
	if err := get(noCert, member.ClientURL); err == nil {
		t.Error("etcd answered a client without a certificate")
	}
	if err := get(http.DefaultClient, "http://"+strings.TrimPrefix(member.ClientURL, "https://")); err == nil {
		t.Error("etcd answered plain HTTP")
	}
}
