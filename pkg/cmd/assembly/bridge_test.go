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

package assembly

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/evictionrequest/apiserver/pkg/bridge"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
)

// The bridge's clients carry the bridge's user agent in either binary, and
// the config they are made from keeps its own.
func TestBridgeClientsCarryTheBridgesUserAgent(t *testing.T) {
	var mu sync.Mutex
	var agents []string
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		agents = append(agents, r.UserAgent())
		mu.Unlock()
		http.NotFound(w, r)
	}))
	defer server.Close()
	config := rest.AddUserAgent(&rest.Config{Host: server.URL}, "evictionrequest-controller")
	for _, api := range []evictionapi.API{evictionapi.Coordination, evictionapi.Lifecycle} {
		clients, err := BridgeClients(config, api)
		if err != nil {
			t.Fatal(err)
		}
		if (clients.EvictionRequests != nil) != (api == evictionapi.Coordination) {
			t.Errorf("%s: EvictionRequests client %v, want one on coordination.k8s.io only", api, clients.EvictionRequests)
		}
		_, _ = clients.Kube.CoreV1().Pods("shop").Get(t.Context(), "web-0", metav1.GetOptions{})
		_, _ = clients.EventClient.CoreV1().Events("shop").Get(t.Context(), "e", metav1.GetOptions{})
	}
	mu.Lock()
	defer mu.Unlock()
	if len(agents) != 4 {
		t.Fatalf("%d calls reached the server, want 4", len(agents))
	}
	for _, agent := range agents {
		if !strings.HasSuffix(agent, "/"+bridge.UserAgent) {
			t.Errorf("a bridge client called as %q, want the bridge's user agent", agent)
		}
	}
	if !strings.HasSuffix(config.UserAgent, "/evictionrequest-controller") {
		t.Errorf("the binary's config became %q", config.UserAgent)
	}
}
