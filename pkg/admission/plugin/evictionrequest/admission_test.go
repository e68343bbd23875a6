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

package evictionrequest

import (
	"context"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"
	genericadmissioninitializer "k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/evictionrequest/apiserver/internal/cachetest"
	"github.com/evictionrequest/apiserver/pkg/util/cachetransform"
)

func TestOtherResourcesAreIgnored(t *testing.T) {
	plugin := newPlugin(t, nil, nil)
	a := admission.NewAttributesRecord(newPod(), nil, corev1.SchemeGroupVersion.WithKind("Pod"), namespace, "web-0",
		corev1.SchemeGroupVersion.WithResource("pods"), "", admission.Create, &metav1.CreateOptions{}, false, &user.DefaultInfo{Name: "intern"})
	if err := plugin.Admit(context.Background(), a, nil); err != nil {
		t.Errorf("Admit of a pod: %v", err)
	}
	if err := plugin.Validate(context.Background(), a, nil); err != nil {
		t.Errorf("Validate of a pod: %v", err)
	}
}

func TestNotReadyIsRetryable(t *testing.T) {
	plugin := New()
	// An informer that is never started never syncs.
	factory := cachetest.KubeInformers(fake.NewClientset(), cachetransform.TrimPodKeeping(PodAnnotationsRead...))
	genericadmissioninitializer.New(fake.NewClientset(), nil, factory, authorizer.AuthorizerFunc(nil), nil, nil, nil, nil).Initialize(plugin)

	err := plugin.Admit(context.Background(), attributes(admission.Create, "", allowedUser, newEvictionRequest(), nil), nil)
	status, ok := err.(apierrors.APIStatus)
	if !ok || status.Status().Code != http.StatusServiceUnavailable || status.Status().Details.RetryAfterSeconds < 1 {
		t.Fatalf("admission before the pod cache synced: %v, want a 503 with Retry-After", err)
	}
}

func TestValidateInitializationNamesWhatIsMissing(t *testing.T) {
	err := New().ValidateInitialization()
	for _, want := range []string{"pod lister", "kube client", "authorizer"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ValidateInitialization() = %v, want it to name the missing %s", err, want)
		}
	}
}
