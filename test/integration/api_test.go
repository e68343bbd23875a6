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
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	clientset "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned"
)

const namespace = "default"

func podUID(i int) string {
	return fmt.Sprintf("0b7c9a52-0000-4000-8000-%012d", i)
}

func newEvictionRequest(i int) *v1alpha1.EvictionRequest {
	return &v1alpha1.EvictionRequest{
		ObjectMeta: metav1.ObjectMeta{Name: podUID(i), Namespace: namespace},
		Spec: v1alpha1.EvictionRequestSpec{
			Type:         v1alpha1.Soft,
			Target:       v1alpha1.EvictionTarget{PodRef: &v1alpha1.LocalPodReference{Name: fmt.Sprintf("pod-%d", i), UID: podUID(i)}},
			Requesters:   []v1alpha1.Requester{{Name: "nodemaintenance.k8s.io"}},
			Interceptors: []v1alpha1.Interceptor{{Name: "a.example.com"}, {Name: "b.example.com"}},
		},
	}
}

func callContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func create(t *testing.T, c clientset.Interface, er *v1alpha1.EvictionRequest) *v1alpha1.EvictionRequest {
	t.Helper()
	created, err := c.CoordinationV1alpha1().EvictionRequests(namespace).Create(callContext(t), er, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating %s: %v", er.Name, err)
	}
	return created
}

// TestServer checks, on one server, what a client of the API sees besides
// the KEP's rules: discovery, OpenAPI, tables, selectors, the status
// subresource and authentication.
func TestServer(t *testing.T) {
	s := startServer(t, clusterPlugins)
	c := s.clientset(t)
	t.Run("discovery", func(t *testing.T) { testDiscovery(t, s) })
	t.Run("openapi", func(t *testing.T) { testOpenAPI(t, s) })
	t.Run("table", func(t *testing.T) { testTable(t, s, c) })
	t.Run("field selectors", func(t *testing.T) { testFieldSelectors(t, c) })
	t.Run("status subresource", func(t *testing.T) { testStatusSubresource(t, c) })
	t.Run("authentication and authorization", func(t *testing.T) { testAuth(t, s) })
	t.Run("health checks without credentials", func(t *testing.T) { testHealthWithoutCredentials(t, s) })
}

func testDiscovery(t *testing.T, s *testServer) {
	d, err := discovery.NewDiscoveryClientForConfig(s.admin)
	if err != nil {
		t.Fatal(err)
	}
	resources, err := d.ServerResourcesForGroupVersion(v1alpha1.SchemeGroupVersion.String())
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]metav1.APIResource{}
	for _, r := range resources.APIResources {
		byName[r.Name] = r
	}
	main, ok := byName["evictionrequests"]
	if !ok {
		t.Fatalf("evictionrequests missing from discovery: %+v", resources.APIResources)
	}
	if !main.Namespaced || main.Kind != "EvictionRequest" || !slices.Equal(main.ShortNames, []string{"evr"}) || main.SingularName != "evictionrequest" {
		t.Errorf("evictionrequests: %+v", main)
	}
	wantVerbs := []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
	if got := slices.Sorted(slices.Values(main.Verbs)); !slices.Equal(got, wantVerbs) {
		t.Errorf("verbs = %v, want %v", got, wantVerbs)
	}
	status, ok := byName["evictionrequests/status"]
	if !ok {
		t.Fatalf("evictionrequests/status missing from discovery")
	}
	if got := slices.Sorted(slices.Values(status.Verbs)); !slices.Equal(got, []string{"get", "patch", "update"}) {
		t.Errorf("status verbs = %v", got)
	}

	// Aggregated discovery, which kubectl and the aggregator read.
	groups, _, err := d.ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, g := range groups {
		if g.Name == v1alpha1.GroupName && g.PreferredVersion.Version == "v1alpha1" {
			found = true
		}
	}
	if !found {
		t.Errorf("group %s/v1alpha1 missing from %+v", v1alpha1.GroupName, groups)
	}
}

func testOpenAPI(t *testing.T, s *testServer) {
	d, err := discovery.NewDiscoveryClientForConfig(s.admin)
	if err != nil {
		t.Fatal(err)
	}
	v2, err := d.OpenAPISchema()
	if err != nil {
		t.Fatal(err)
	}
	var v2Names []string
	for _, def := range v2.GetDefinitions().GetAdditionalProperties() {
		v2Names = append(v2Names, def.GetName())
	}
	if !slices.ContainsFunc(v2Names, func(n string) bool { return strings.HasSuffix(n, "coordination.v1alpha1.EvictionRequest") }) {
		t.Errorf("OpenAPI v2 lacks the EvictionRequest definition: %v", v2Names)
	}

	paths, err := d.OpenAPIV3().Paths()
	if err != nil {
		t.Fatal(err)
	}
	gv, ok := paths["apis/coordination.k8s.io/v1alpha1"]
	if !ok {
		t.Fatalf("OpenAPI v3 lacks apis/coordination.k8s.io/v1alpha1: %v", paths)
	}
	raw, err := gv.Schema("application/json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Required   []string                   `json:"required"`
				Properties map[string]json.RawMessage `json:"properties"`
				GVK        []map[string]string        `json:"x-kubernetes-group-version-kind"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var spec, er bool
	for name, schema := range doc.Components.Schemas {
		switch {
		case strings.HasSuffix(name, "coordination.v1alpha1.EvictionRequestSpec"):
			spec = true
			if !slices.Contains(schema.Required, "target") || schema.Properties["heartbeatDeadlineSeconds"] == nil {
				t.Errorf("OpenAPI v3 %s: required %v, properties %v", name, schema.Required, schema.Properties)
			}
		case strings.HasSuffix(name, "coordination.v1alpha1.EvictionRequest"):
			er = true
			if len(schema.GVK) != 1 || schema.GVK[0]["kind"] != "EvictionRequest" || schema.GVK[0]["version"] != "v1alpha1" {
				t.Errorf("OpenAPI v3 %s: x-kubernetes-group-version-kind %v", name, schema.GVK)
			}
		}
	}
	if !spec || !er {
		t.Errorf("OpenAPI v3 lacks EvictionRequest (%v) or its spec (%v)", er, spec)
	}
}

func testTable(t *testing.T, s *testServer, c clientset.Interface) {
	er := newEvictionRequest(1)
	create(t, c, er)
	client, err := rest.RESTClientFor(restConfigForJSON(s.admin))
	if err != nil {
		t.Fatal(err)
	}
	var table metav1.Table
	err = client.Get().AbsPath("/apis/coordination.k8s.io/v1alpha1/namespaces", namespace, "evictionrequests").
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").
		Do(callContext(t)).Into(&table)
	if err != nil {
		t.Fatal(err)
	}
	var columns []string
	for _, col := range table.ColumnDefinitions {
		columns = append(columns, col.Name)
	}
	if want := []string{"Name", "Pod", "Requesters", "Active Interceptor", "Complete", "Failed Evictions", "Age",
		"Interceptors", "Cancellation", "Heartbeat", "Message"}; !slices.Equal(columns, want) {
		t.Errorf("columns = %v, want %v", columns, want)
	}
	if len(table.Rows) != 1 {
		t.Fatalf("rows: %+v", table.Rows)
	}
	cells := table.Rows[0].Cells
	if cells[0] != er.Name || cells[1] != "pod-1" || cells[2] != "nodemaintenance.k8s.io" {
		t.Errorf("row = %v", cells)
	}
}

// restConfigForJSON is config for a REST client that decodes metav1 types.
func restConfigForJSON(config *rest.Config) *rest.Config {
	c := rest.CopyConfig(config)
	c.GroupVersion = &metav1.SchemeGroupVersion
	c.NegotiatedSerializer = metav1Codecs
	c.APIPath = "/apis"
	return c
}

func testFieldSelectors(t *testing.T, c clientset.Interface) {
	ers := c.CoordinationV1alpha1().EvictionRequests(namespace)
	create(t, c, newEvictionRequest(2))
	third := create(t, c, newEvictionRequest(3))
	third.Status.ActiveInterceptorName = ptr.To("b.example.com")
	third.Status.HeartbeatTime = ptr.To(metav1.NewTime(time.Now().Truncate(time.Second)))
	if _, err := ers.UpdateStatus(callContext(t), third, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		selector fields.Set
		want     []string
	}{
		{fields.Set{v1alpha1.PodNameField: "pod-2"}, []string{podUID(2)}},
		{fields.Set{v1alpha1.PodUIDField: podUID(3)}, []string{podUID(3)}},
		{fields.Set{v1alpha1.ActiveInterceptorNameField: "b.example.com"}, []string{podUID(3)}},
		{fields.Set{"metadata.name": podUID(2)}, []string{podUID(2)}},
	} {
		list, err := ers.List(callContext(t), metav1.ListOptions{FieldSelector: tc.selector.String()})
		if err != nil {
			t.Errorf("%s: %v", tc.selector, err)
			continue
		}
		var got []string
		for _, item := range list.Items {
			got = append(got, item.Name)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s selected %v, want %v", tc.selector, got, tc.want)
		}
	}

	_, err := ers.List(callContext(t), metav1.ListOptions{FieldSelector: "spec.type=Soft"})
	if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), "spec.type") {
		t.Errorf("an unsupported field selector: got %v, want 400 naming spec.type", err)
	}
}

func testStatusSubresource(t *testing.T, c clientset.Interface) {
	ers := c.CoordinationV1alpha1().EvictionRequests(namespace)
	created := create(t, c, newEvictionRequest(4))

	// A status write through the main resource is dropped.
	withStatus := created.DeepCopy()
	withStatus.Status.Message = "through the main resource"
	updated, err := ers.Update(callContext(t), withStatus, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if updated.Status.Message != "" {
		t.Errorf("the main resource wrote status.message %q", updated.Status.Message)
	}

	// A spec write through /status is dropped, and the generation stays.
	withSpec := updated.DeepCopy()
	withSpec.Spec.Requesters = append(withSpec.Spec.Requesters, v1alpha1.Requester{Name: "descheduler.example.com"})
	withSpec.Status.Message = "through /status"
	// Nor does /status write metadata: no relabeling, no finalizer that
	// would hold the deletion.
	withSpec.Labels = map[string]string{"relabeled": "true"}
	withSpec.Finalizers = []string{"example.com/hold"}
	updated, err = ers.UpdateStatus(callContext(t), withSpec, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(updated.Spec.Requesters) != 1 || updated.Generation != 1 {
		t.Errorf("/status changed the spec: requesters %v, generation %d", updated.Spec.Requesters, updated.Generation)
	}
	if len(updated.Labels) != 0 || len(updated.Finalizers) != 0 {
		t.Errorf("/status changed the metadata: labels %v, finalizers %v", updated.Labels, updated.Finalizers)
	}
	if updated.Status.Message != "through /status" {
		t.Errorf("/status did not write status.message: %q", updated.Status.Message)
	}

	// A condition's transition time is the server's: a Complete the
	// writer dated 2020 is stored as of now, so that the TTL of a completed
	// request counts from when the server saw it complete.
	before := time.Now().Add(-time.Minute)
	dated := updated.DeepCopy()
	dated.Status.Conditions = append(dated.Status.Conditions, metav1.Condition{Type: string(v1alpha1.EvictionRequestComplete),
		Status: metav1.ConditionTrue, Reason: v1alpha1.CompleteReasonPodDeleted, LastTransitionTime: metav1.NewTime(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))})
	completed, err := ers.UpdateStatus(callContext(t), dated, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := completed.Status.Conditions[0]; c.LastTransitionTime.Time.Before(before) {
		t.Errorf("the Complete condition was stored as of %s, the writer's time; want the server's", c.LastTransitionTime.UTC())
	}
}

func testAuth(t *testing.T, s *testServer) {
	for _, tc := range []struct {
		name   string
		config *rest.Config
		check  func(error) bool
	}{
		{"a user outside system:masters is denied", s.stranger, apierrors.IsForbidden},
		{"a request without credentials is unauthorized", s.anonymous, apierrors.IsUnauthorized},
		{"a certificate of an unknown CA is unauthorized", s.unknownCA, apierrors.IsUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := clientset.NewForConfig(tc.config)
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.CoordinationV1alpha1().EvictionRequests(namespace).List(callContext(t), metav1.ListOptions{})
			if !tc.check(err) {
				t.Errorf("got %v", err)
			}
		})
	}
}

func testHealthWithoutCredentials(t *testing.T, s *testServer) {
	client, err := rest.HTTPClientFor(s.anonymous)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/healthz", "/livez", "/readyz?exclude=informer-sync"} {
		resp, err := client.Get(s.anonymous.Host + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s without credentials: %d, want 200", path, resp.StatusCode)
		}
	}
}

// TestAnonymousAuthEverywhere turns anonymous authentication on for every
// path: a request without credentials is then authorized as
// system:anonymous, and denied; a client certificate the server does not
// trust is still unauthorized, as the flag's help says.
func TestAnonymousAuthEverywhere(t *testing.T) {
	s := startServer(t, clusterPlugins, "--anonymous-auth")
	c, err := clientset.NewForConfig(s.anonymous)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.CoordinationV1alpha1().EvictionRequests(namespace).List(callContext(t), metav1.ListOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "system:anonymous") {
		t.Errorf("list without credentials: got %v, want 403 for system:anonymous", err)
	}
	untrusted, err := clientset.NewForConfig(s.unknownCA)
	if err != nil {
		t.Fatal(err)
	}
	if _, err = untrusted.CoordinationV1alpha1().EvictionRequests(namespace).List(callContext(t), metav1.ListOptions{}); !apierrors.IsUnauthorized(err) {
		t.Errorf("list with a certificate of an unknown CA: got %v, want 401", err)
	}
}
