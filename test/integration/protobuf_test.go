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

package integration

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/evictionrequest/apiserver/pkg/api/internalscheme"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	clientset "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned"
)

// protobufPrefix starts every object Kubernetes encodes as protobuf.
var protobufPrefix = []byte("k8s\x00")

// contentTypes records the Content-Type of the requests and responses of a
// client.
type contentTypes struct {
	mu        sync.Mutex
	requests  []string
	responses []string
}

func (c *contentTypes) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		c.mu.Lock()
		defer c.mu.Unlock()
		if req.Body != nil {
			c.requests = append(c.requests, req.Header.Get("Content-Type"))
		}
		if resp != nil {
			c.responses = append(c.responses, resp.Header.Get("Content-Type"))
		}
		return resp, err
	})
}

func (c *contentTypes) all() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append(append([]string(nil), c.requests...), c.responses...)
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// TestProtobuf checks that the server speaks and stores protobuf: the
// generated clientset writes, reads, lists and watches in it, the garbage
// collector's metadata requests are answered in it, objects are stored in
// it, and objects an earlier version stored as JSON stay readable.
func TestProtobuf(t *testing.T) {
	members := startEtcdCluster(t, 1)
	s := startServer(t, clusterPlugins, "--etcd-servers="+members[0].clientURL())
	ctx := callContext(t)

	seen := &contentTypes{}
	config := rest.CopyConfig(s.admin)
	config.Wrap(seen.wrap)
	c, err := clientset.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	ers := c.CoordinationV1alpha1().EvictionRequests(namespace)
	w, err := ers.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	created := create(t, c, newEvictionRequest(1))
	if _, err := ers.Get(ctx, created.Name, metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ers.List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-w.ResultChan():
		if e.Type != watch.Added || e.Object.(*v1alpha1.EvictionRequest).Name != created.Name {
			t.Errorf("watch event %s %#v, want ADDED %s", e.Type, e.Object, created.Name)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no watch event for the create")
	}
	for _, contentType := range seen.all() {
		// A watch answers application/vnd.kubernetes.protobuf;stream=watch.
		if !strings.HasPrefix(contentType, runtime.ContentTypeProtobuf) {
			t.Errorf("the clientset sent or got %q, want %s", contentType, runtime.ContentTypeProtobuf)
		}
	}

	// What kube-controller-manager's garbage collector asks for.
	raw := s.rawGet(t, "/apis/coordination.k8s.io/v1alpha1/namespaces/"+namespace+"/evictionrequests",
		"application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1")
	metaScheme := runtime.NewScheme()
	if err := metav1.AddMetaToScheme(metaScheme); err != nil {
		t.Fatal(err)
	}
	var metadata metav1.PartialObjectMetadataList
	if _, _, err := protobuf.NewSerializer(metaScheme, metaScheme).Decode(raw, nil, &metadata); err != nil {
		t.Fatalf("decoding the protobuf PartialObjectMetadataList: %v", err)
	}
	if len(metadata.Items) != 1 || metadata.Items[0].Name != created.Name {
		t.Errorf("PartialObjectMetadataList items %+v, want %s", metadata.Items, created.Name)
	}

	// Stored as protobuf.
	etcd, err := clientv3.New(clientv3.Config{Endpoints: []string{members[0].clientURL()}, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = etcd.Close() }()
	key, value := storedObject(t, etcd, created.Name)
	if !bytes.HasPrefix(value, protobufPrefix) {
		t.Errorf("stored %q, want protobuf", value)
	}

	// An object stored as JSON, as the server did before it spoke protobuf,
	// is read, and written back as protobuf.
	legacy := newEvictionRequest(2)
	legacy.TypeMeta = metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: "EvictionRequest"}
	legacy.UID = "legacy-uid"
	legacy.CreationTimestamp = metav1.Now()
	legacyJSON, err := runtime.Encode(internalscheme.Codecs.LegacyCodec(v1alpha1.SchemeGroupVersion), legacy)
	if err != nil {
		t.Fatal(err)
	}
	legacyKey := strings.TrimSuffix(key, created.Name) + legacy.Name
	if _, err := etcd.Put(ctx, legacyKey, string(legacyJSON)); err != nil {
		t.Fatal(err)
	}
	got, err := ers.Get(ctx, legacy.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading an object stored as JSON: %v", err)
	}
	if got.UID != legacy.UID || got.Spec.Target.PodRef.Name != legacy.Spec.Target.PodRef.Name {
		t.Errorf("read %+v, want what was stored as JSON: %+v", got, legacy)
	}
	got.Labels = map[string]string{"rewritten": "true"}
	if _, err := ers.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, value := storedObject(t, etcd, legacy.Name); !bytes.HasPrefix(value, protobufPrefix) {
		t.Errorf("rewritten as %q, want protobuf", value)
	}
}

// storedObject returns the etcd key and value of the EvictionRequest name.
func storedObject(t *testing.T, etcd *clientv3.Client, name string) (string, []byte) {
	t.Helper()
	resp, err := etcd.Get(callContext(t), "/registry/coordination.k8s.io/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range resp.Kvs {
		if strings.HasSuffix(string(kv.Key), "/"+namespace+"/"+name) {
			return string(kv.Key), kv.Value
		}
	}
	t.Fatalf("no key of %s/%s in etcd", namespace, name)
	return "", nil
}

// rawGet gets path as the admin, accepting only accept, and returns the body.
func (s *testServer) rawGet(t *testing.T, path, accept string) []byte {
	t.Helper()
	client, err := rest.HTTPClientFor(s.admin)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(callContext(t), http.MethodGet, s.admin.Host+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", accept)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), runtime.ContentTypeProtobuf) {
		t.Fatalf("GET %s accepting %s: %s, Content-Type %q: %q", path, accept, resp.Status, resp.Header.Get("Content-Type"), body)
	}
	return body
}
