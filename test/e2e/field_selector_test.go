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
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
)

func TestFieldSelectors(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := f.NewNamespace(t)
	client := f.EvictionRequests(ns)
	web := f.CreateEvictionRequest(t, parkedPod(t, ns, "web-0"), "nodemaintenance.k8s.io")
	db := f.CreateEvictionRequest(t, parkedPod(t, ns, "db-0"), "nodemaintenance.k8s.io")

	// The parked interceptor becomes active on both requests: the controller
	// selects it, or this test does what the controller would.
	for _, er := range []*v1alpha1.EvictionRequest{web, db} {
		setStatus(t, ns, er.Name, func(er *v1alpha1.EvictionRequest) {
			if er.Status.ActiveInterceptorName == nil {
				er.Status.ActiveInterceptorName = ptr.To(parkedInterceptor)
			}
		})
	}

	cases := map[string]struct {
		selector string
		want     []string
	}{
		"pod name":                 {v1alpha1.PodNameField + "=web-0", []string{web.Name}},
		"pod uid":                  {v1alpha1.PodUIDField + "=" + db.Name, []string{db.Name}},
		"pod name not":             {v1alpha1.PodNameField + "!=web-0", []string{db.Name}},
		"active interceptor":       {v1alpha1.ActiveInterceptorNameField + "=" + parkedInterceptor, sorted(web.Name, db.Name)},
		"other active":             {v1alpha1.ActiveInterceptorNameField + "=other.example.com", nil},
		"pod name and interceptor": {v1alpha1.PodNameField + "=db-0," + v1alpha1.ActiveInterceptorNameField + "=" + parkedInterceptor, []string{db.Name}},
	}
	for name, tc := range cases {
		t.Run("client-go/"+name, func(t *testing.T) {
			list, err := client.List(ctx, metav1.ListOptions{FieldSelector: tc.selector})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, er := range list.Items {
				got = append(got, er.Name)
			}
			if diff := cmp.Diff(tc.want, sorted(got...)); diff != "" {
				t.Errorf("%s selected (-want +got):\n%s", tc.selector, diff)
			}
		})
		t.Run("kubectl/"+name, func(t *testing.T) {
			out := f.MustKubectl(t, "get", "evr", "-n", ns, "--field-selector="+tc.selector, "-o", "name")
			var got []string
			for _, line := range strings.Fields(out) {
				got = append(got, strings.TrimPrefix(line, "evictionrequest.coordination.k8s.io/"))
			}
			if diff := cmp.Diff(tc.want, sorted(got...)); diff != "" {
				t.Errorf("kubectl --field-selector=%s (-want +got):\n%s", tc.selector, diff)
			}
		})
	}

	t.Run("unsupported field", func(t *testing.T) {
		r := f.Kubectl(t, "get", "evr", "-n", ns, "--field-selector=spec.type=Soft")
		if r.Err == nil || !strings.Contains(r.Stderr, "field label not supported") {
			t.Errorf("selecting on spec.type: err %v, stderr %q; want a refusal naming the field label", r.Err, r.Stderr)
		}
	})
}

func sorted(names ...string) []string {
	if len(names) == 0 {
		return nil
	}
	sort.Strings(names)
	return names
}
