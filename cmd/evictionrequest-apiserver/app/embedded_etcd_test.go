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
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/api/internalscheme"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination"
	"github.com/evictionrequest/apiserver/pkg/registry/coordination/evictionrequest/storage"
	"github.com/evictionrequest/apiserver/pkg/registry/registrytest"
)

func TestEmbeddedEtcdIsOnlyUsedWithoutEtcdServers(t *testing.T) {
	o := NewEmbeddedEtcdOptions()
	url, err := o.Complete([]string{"https://etcd.example.com:2379"})
	if err != nil || url != "" || o.enabled {
		t.Errorf("with --etcd-servers: url %q, enabled %v, err %v; want no embedded etcd", url, o.enabled, err)
	}
	_, ctx := ktesting.NewTestContext(t)
	stop, err := o.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stop()
}

// TestEmbeddedEtcdKeepsObjectsAcrossRestart stores an EvictionRequest through
// the server's storage in the embedded etcd, stops etcd, starts it again on
// the same data directory (and other free ports) and reads the object back.
func TestEmbeddedEtcdKeepsObjectsAcrossRestart(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx = genericapirequest.WithNamespace(ctx, "default")
	dataDir := t.TempDir()
	const uid = "c1f0a6a4-3f55-4d1e-9a2b-5d6e7f8a9b0c"

	withEtcd := func(use func(r *storage.REST)) {
		t.Helper()
		o := &EmbeddedEtcdOptions{DataDir: dataDir}
		url, err := o.Complete(nil)
		if err != nil {
			t.Fatal(err)
		}
		if errs := o.Validate(); len(errs) > 0 {
			t.Fatal(errs)
		}
		stop, err := o.Start(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer stop()
		r, _, err := storage.NewREST(internalscheme.Scheme, registrytest.NewRESTOptions([]string{url}), clock.RealClock{})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Destroy()
		use(r)
	}

	var created *coordination.EvictionRequest
	withEtcd(func(r *storage.REST) {
		obj, err := r.Create(ctx, &coordination.EvictionRequest{
			ObjectMeta: metav1.ObjectMeta{Name: uid, Namespace: "default"},
			Spec: coordination.EvictionRequestSpec{
				Type:                     coordination.Soft,
				Target:                   coordination.EvictionTarget{PodRef: &coordination.LocalPodReference{Name: "db-0", UID: uid}},
				Requesters:               []coordination.Requester{{Name: "nodemaintenance.k8s.io"}},
				HeartbeatDeadlineSeconds: ptr.To[int32](1800),
			},
		}, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		created = obj.(*coordination.EvictionRequest)
	})
	withEtcd(func(r *storage.REST) {
		obj, err := r.Get(ctx, uid, &metav1.GetOptions{})
		if err != nil {
			t.Fatalf("after a restart on the same data directory: %v", err)
		}
		if got := obj.(*coordination.EvictionRequest); got.UID != created.UID || got.ResourceVersion != created.ResourceVersion {
			t.Errorf("read back %s/%s, want the stored %s/%s", got.UID, got.ResourceVersion, created.UID, created.ResourceVersion)
		}
	})
}
