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

package bridge

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	policyutil "github.com/evictionrequest/apiserver/pkg/api/policy/v1"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
)

// admin may delete pods in the access reviews of reviewAccess.
const admin = "admin@example.com"

// reviewAccess answers the bridge's SubjectAccessReviews as an authorizer
// that lets admin delete pods and nobody else, or fails with err, and
// keeps the reviews' specs.
func (f *fixture) reviewAccess(err error) *[]authorizationv1.SubjectAccessReviewSpec {
	var specs []authorizationv1.SubjectAccessReviewSpec
	f.kube.PrependReactor("create", "subjectaccessreviews", func(action clienttesting.Action) (bool, runtime.Object, error) {
		review := action.(clienttesting.CreateAction).GetObject().(*authorizationv1.SubjectAccessReview).DeepCopy()
		specs = append(specs, review.Spec)
		if err != nil {
			return true, nil, err
		}
		attrs := review.Spec.ResourceAttributes
		review.Status.Allowed = review.Spec.User == admin && attrs != nil && attrs.Verb == "delete" && attrs.Resource == "pods"
		return true, review, nil
	})
	return &specs
}

// newAuthenticatedFixture is newFixture whose reviews come from
// kube-apiserver, as its client certificate proves.
func newAuthenticatedFixture(t *testing.T, objects ...runtime.Object) *fixture {
	t.Helper()
	kubeCA, _, callers := callerCAs(t)
	f := newFixtureWith(t, evictionapi.Coordination, Config{Callers: callers}, objects...)
	cert := clientCert(t, kubeCA, kubeAPIServerName)
	f.reviewer = func(r *http.Request) { r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{cert}} }
	return f
}

// escalation is an eviction of namespace/pod asking to skip its
// participants, as a drain's escalation at its deadline.
func escalation(namespace, pod string) policyv1.Eviction {
	e := policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: pod}}
	policyutil.SkipParticipants(&e, "the drain's deadline passed")
	return e
}

// An escalation goes past a protected pod's participants only for a caller
// that may delete the pod, as kube-apiserver's authorizer answers for the
// user, groups and extra of the review; anyone else gets 403 naming the
// rule; and nothing is written either way.
func TestTheWebhookLetsAnEscalationThroughOnlyForACallerThatMayDeleteThePod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pod := interceptedPod("db-0").Obj()
		f := newAuthenticatedFixture(t, pod)
		specs := f.reviewAccess(nil)
		user := authenticationv1.UserInfo{Username: admin, UID: "uid-admin", Groups: []string{"ops"}, Extra: map[string]authenticationv1.ExtraValue{"scopes": {"drain"}}}
		if code, response := f.post(escalation(pod.Namespace, pod.Name), user); code != http.StatusOK || !response.Allowed {
			t.Fatalf("HTTP %d, response %+v: want the escalation of a caller that may delete the pod allowed", code, response)
		}
		want := authorizationv1.SubjectAccessReviewSpec{User: admin, UID: "uid-admin", Groups: []string{"ops"}, Extra: map[string]authorizationv1.ExtraValue{"scopes": {"drain"}},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: pod.Namespace, Verb: "delete", Resource: "pods", Name: pod.Name}}
		if len(*specs) != 1 || !cmp.Equal((*specs)[0], want) {
			t.Errorf("access reviews %+v, want one of %+v", *specs, want)
		}

		code, response := f.post(escalation(pod.Namespace, pod.Name), authenticationv1.UserInfo{Username: drainer})
		if code != http.StatusOK || response.Allowed {
			t.Fatalf("HTTP %d, response %+v: want the escalation of a caller that may only evict refused", code, response)
		}
		if r := response.Result; r.Code != http.StatusForbidden || r.Reason != metav1.StatusReasonForbidden || r.Details.RetryAfterSeconds != 0 ||
			!strings.Contains(r.Message, "only to a caller that may delete the pod: "+drainer) {
			t.Errorf("result %+v, want 403 naming the rule and the caller, without Retry-After", r)
		}
		if w := slices.DeleteFunc(writes(f.kube.Actions()), func(w string) bool { return w == "create subjectaccessreviews" }); len(w) != 0 {
			t.Errorf("escalations wrote %v", w)
		}
		if w := writes(f.evr.Actions()); len(w) != 0 {
			t.Errorf("escalations wrote %v", w)
		}

		// An eviction the bridge lets through anyway asks nothing of the
		// authorizer.
		plain := wrappers.MakePod("web-0").UID("uid-web-0").Obj()
		if _, err := f.kube.CoreV1().Pods(plain.Namespace).Create(t.Context(), plain, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		reviews := len(*specs)
		if code, response := f.post(escalation(plain.Namespace, plain.Name), authenticationv1.UserInfo{Username: drainer}); code != http.StatusOK || !response.Allowed {
			t.Errorf("HTTP %d, response %+v: want the escalation of a pod without interceptors allowed", code, response)
		}
		if len(*specs) != reviews {
			t.Errorf("the escalation of a pod without interceptors was reviewed: %+v", (*specs)[reviews:])
		}
	})
}

// A review the bridge cannot prove kube-apiserver sent (a bridge that
// serves any caller) names whomever its sender likes: its escalation is
// refused with 403, and the authorizer is asked nothing, so that the
// bridge's port answers no question about anyone's rights.
func TestTheWebhookRefusesTheEscalationOfAnUnauthenticatedReview(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pod := interceptedPod("db-0").Obj()
		f := newFixture(t, evictionapi.Coordination, pod)
		specs := f.reviewAccess(nil)
		code, response := f.post(escalation(pod.Namespace, pod.Name), authenticationv1.UserInfo{Username: admin})
		if code != http.StatusOK || response.Allowed || response.Result.Code != http.StatusForbidden ||
			!strings.Contains(response.Result.Message, "only on a review kube-apiserver proved it sent") {
			t.Fatalf("HTTP %d, response %+v: want 403 naming the rule", code, response)
		}
		if len(*specs) != 0 {
			t.Errorf("an unauthenticated review asked the authorizer %+v", *specs)
		}
	})
}

// An escalation whose caller's access cannot be reviewed keeps the pod: a
// 429 naming the failure, never kube-apiserver's failurePolicy.
func TestTheWebhookKeepsThePodWhenAnEscalationCannotBeReviewed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pod := interceptedPod("db-0").Obj()
		f := newAuthenticatedFixture(t, pod)
		f.reviewAccess(errors.New("the authorizer timed out"))
		code, response := f.post(escalation(pod.Namespace, pod.Name), authenticationv1.UserInfo{Username: admin})
		if code != http.StatusOK || response.Allowed {
			t.Fatalf("HTTP %d, response %+v: want a refusal", code, response)
		}
		if r := response.Result; r.Code != http.StatusTooManyRequests || !strings.Contains(r.Message, "could not be reviewed") || !strings.Contains(r.Message, "the authorizer timed out") {
			t.Errorf("result %+v, want 429 naming the failed review", r)
		}
	})
}
