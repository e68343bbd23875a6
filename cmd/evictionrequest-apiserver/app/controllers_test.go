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
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/evictionrequest/apiserver/internal/wrappers"
	"github.com/evictionrequest/apiserver/pkg/drain"
	erfake "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned/fake"
	"github.com/evictionrequest/apiserver/pkg/generated/informers/externalversions"
)

// The controllers' cache of EvictionRequests keeps what its readers read:
// with the node drain on, the deadline annotations it removes when it
// withdraws; labels and managedFields, which none reads, go.
func TestTheRequestCacheKeepsWhatTheNodeDrainReads(t *testing.T) {
	request := wrappers.MakeEvictionRequest(wrappers.MakePod("db-0").Obj()).Obj()
	request.Labels = map[string]string{"app": "db"}
	request.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
	request.Annotations = map[string]string{"note": "unread"}
	for _, key := range drain.RequestAnnotations {
		request.Annotations[key] = "kept"
	}
	m := controllerManager(t, parse(t, "--enable-node-drain-controller"))
	// The binary's own factory options are what this test checks.
	factory := externalversions.NewSharedInformerFactoryWithOptions(erfake.NewClientset(request), 0, m.EvictionRequestInformerOptions...) //nolint:forbidigo // the options under test
	requests := factory.Coordination().V1alpha1().EvictionRequests()
	informer := requests.Informer()
	ctx, cancel := context.WithCancel(t.Context())
	defer factory.Shutdown()
	defer cancel()
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		t.Fatal("the cache did not sync")
	}
	cached, err := requests.Lister().EvictionRequests(request.Namespace).Get(request.Name)
	if err != nil {
		t.Fatalf("the request is not in the cache: %v", err)
	}
	for _, key := range drain.RequestAnnotations {
		if cached.Annotations[key] != "kept" {
			t.Errorf("the cache lost the annotation %s the node drain reads: %v", key, cached.Annotations)
		}
	}
	if len(cached.Labels) != 0 || len(cached.ManagedFields) != 0 || cached.Annotations["note"] != "" {
		t.Errorf("the cache keeps metadata nobody reads: %+v", cached.ObjectMeta)
	}
}
