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

package app

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/evictionrequest/apiserver/pkg/api/internalscheme"
)

// reviewServer answers SubjectAccessReviews as kube-apiserver would, in
// the encoding they were asked in, allowing only the user "allowed", and
// records the users it was asked about, the encodings of the reviews and
// the Accept headers.
type reviewServer struct {
	mu    sync.Mutex
	asked []string
	// contentTypes holds each review's Content-Type, then its Accept.
	contentTypes []string
}

func (r *reviewServer) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if req.URL.Path != "/apis/authorization.k8s.io/v1/subjectaccessreviews" || err != nil {
		http.Error(w, "not a SubjectAccessReview", http.StatusBadRequest)
		return
	}
	contentType := req.Header.Get("Content-Type")
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), contentType)
	if !ok {
		http.Error(w, "unsupported media type "+contentType, http.StatusUnsupportedMediaType)
		return
	}
	review := &authorizationv1.SubjectAccessReview{}
	if _, _, err := info.Serializer.Decode(body, nil, review); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.asked = append(r.asked, review.Spec.User)
	r.contentTypes = append(r.contentTypes, contentType, req.Header.Get("Accept"))
	r.mu.Unlock()
	review.Status.Allowed = review.Spec.User == "allowed"
	// The answer comes in the client's first choice, as kube-apiserver's.
	accept, _, _ := strings.Cut(req.Header.Get("Accept"), ",")
	if info, ok = runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), accept); !ok {
		http.Error(w, "not acceptable: "+accept, http.StatusNotAcceptable)
		return
	}
	w.Header().Set("Content-Type", accept)
	encoder := scheme.Codecs.EncoderForVersion(info.Serializer, authorizationv1.SchemeGroupVersion)
	_ = encoder.Encode(review, w)
}

func kubeconfigFor(t *testing.T, server string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	config := clientcmdapi.NewConfig()
	config.Clusters["c"] = &clientcmdapi.Cluster{Server: server}
	config.AuthInfos["u"] = &clientcmdapi.AuthInfo{}
	config.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	config.CurrentContext = "c"
	if err := clientcmd.WriteToFile(*config, path); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLimitedAuthorizerReplacesTheLibrarys checks that the authorizer the
// server and admission share is the one with our client: it keeps what
// delegated authorization allows without asking (system:masters, the
// always-allowed paths) and asks kube-apiserver about everyone else, in
// protobuf.
func TestLimitedAuthorizerReplacesTheLibrarys(t *testing.T) {
	reviews := &reviewServer{}
	kube := httptest.NewServer(reviews)
	defer kube.Close()

	o := parse(t, "--authorization-kubeconfig="+kubeconfigFor(t, kube.URL), "--authorization-kube-api-qps=50", "--authorization-kube-api-burst=5")
	c := genericapiserver.NewRecommendedConfig(internalscheme.Codecs)
	// Standing in for the library's authorizer: one that is kept would
	// deny everything below.
	c.Authorization.Authorizer = authorizerfactory.NewAlwaysDenyAuthorizer()
	if err := o.applyAuthorization(c); err != nil {
		t.Fatal(err)
	}

	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		attrs authorizer.AttributesRecord
		want  authorizer.Decision
		asked bool
	}{
		{"a master", authorizer.AttributesRecord{User: &user.DefaultInfo{Name: "admin", Groups: []string{user.SystemPrivilegedGroup}}, Verb: "create", ResourceRequest: true, Resource: "evictionrequests"}, authorizer.DecisionAllow, false},
		{"an always-allowed path", authorizer.AttributesRecord{User: &user.DefaultInfo{Name: "anyone"}, Verb: "get", Path: "/healthz"}, authorizer.DecisionAllow, false},
		{"a user kube-apiserver allows", authorizer.AttributesRecord{User: &user.DefaultInfo{Name: "allowed"}, Verb: "delete", ResourceRequest: true, Resource: "pods", Name: "web-0"}, authorizer.DecisionAllow, true},
		{"a user kube-apiserver does not allow", authorizer.AttributesRecord{User: &user.DefaultInfo{Name: "denied"}, Verb: "delete", ResourceRequest: true, Resource: "pods", Name: "web-0"}, authorizer.DecisionNoOpinion, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reviews.mu.Lock()
			before := len(reviews.asked)
			reviews.mu.Unlock()
			decision, reason, err := c.Authorization.Authorizer.Authorize(ctx, tc.attrs)
			if err != nil || decision != tc.want {
				t.Errorf("decision %v (%q, %v), want %v", decision, reason, err, tc.want)
			}
			reviews.mu.Lock()
			asked := len(reviews.asked) > before
			reviews.mu.Unlock()
			if asked != tc.asked {
				t.Errorf("kube-apiserver asked: %v, want %v", asked, tc.asked)
			}
		})
	}

	// Both ends of every review and its answer parse them; protobuf is
	// the cheap encoding.
	reviews.mu.Lock()
	defer reviews.mu.Unlock()
	for _, contentType := range reviews.contentTypes {
		if mediaType, _, _ := strings.Cut(contentType, ","); mediaType != runtime.ContentTypeProtobuf {
			t.Errorf("a review was sent, or its answer asked for, as %q; want %q first", contentType, runtime.ContentTypeProtobuf)
		}
	}
}
