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
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// serverNamespace and serverName name the server's service account and the
// Lease of its controllers.
const serverNamespace, serverName = "evictionrequest-system", "evictionrequest-apiserver"

// A server stopped with SIGTERM gives the Lease of its controllers up
// before it exits (a watch of the Lease sees it held by no one between
// the old process and the new one), so the process that replaces it, here
// the server restarted, runs the controllers at once rather than a Lease
// duration later. Not in parallel: the server goes away.
func TestAStoppedServerGivesItsLeaseUpBeforeItExits(t *testing.T) {
	if n := len(f.Replicas()); n != 1 {
		t.Fatalf("the suite runs %d replicas of the server; this test restarts the one that leads, with one replica", n)
	}
	ctx := t.Context()
	leases := f.Kube.CoordinationV1().Leases(serverNamespace)
	held := liveHolder(t)
	w, err := watchtools.NewRetryWatcherWithContext(ctx, held.ResourceVersion, &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
			options.FieldSelector = fields.OneTermEqualSelector("metadata.name", serverName).String()
			return leases.Watch(ctx, options)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	if err := f.RestartServers(ctx, f.EvictionServer()); err != nil {
		t.Fatalf("restarting evictionrequest-apiserver: %v", err)
	}

	old := ptr.Deref(held.Spec.HolderIdentity, "")
	released := false
	deadline := time.After(time.Minute)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("the watch of the Lease ended before a new process held it")
			}
			if ev.Type == watch.Error {
				t.Fatalf("watching the Lease: %v", apierrors.FromObject(ev.Object))
			}
			lease, isLease := ev.Object.(*coordinationv1.Lease)
			if !isLease || (ev.Type != watch.Added && ev.Type != watch.Modified) {
				continue
			}
			switch holder := ptr.Deref(lease.Spec.HolderIdentity, ""); holder {
			case old:
			case "":
				released = true
			default:
				if !released {
					t.Errorf("the Lease went from %q to %q without being given up: the stopped process exited holding it", old, holder)
				}
				return
			}
		case <-deadline:
			t.Fatalf("the restarted server did not take the Lease within a minute (given up: %t)", released)
		}
	}
}

// liveHolder is the server's Lease once its holder renewed it, so that the
// holder is the server running now, not one an earlier test stopped.
func liveHolder(t *testing.T) *coordinationv1.Lease {
	t.Helper()
	leases := f.Kube.CoordinationV1().Leases(serverNamespace)
	var first, renewed *coordinationv1.Lease
	framework.Eventually(t, time.Minute, "the server to renew its Lease", func(ctx context.Context) error {
		lease, err := leases.Get(ctx, serverName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		holder := ptr.Deref(lease.Spec.HolderIdentity, "")
		switch {
		case holder == "":
			first = nil
			return errors.New("held by no one")
		case first == nil || ptr.Deref(first.Spec.HolderIdentity, "") != holder:
			first = lease
			return fmt.Errorf("held by %q, not renewed yet", holder)
		case lease.Spec.RenewTime.Equal(first.Spec.RenewTime):
			return fmt.Errorf("held by %q, not renewed yet", holder)
		}
		renewed = lease
		return nil
	})
	return renewed
}
