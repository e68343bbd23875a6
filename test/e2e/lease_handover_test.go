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
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/test/e2e/framework"
)

// The Lease of the server's in-process controllers.
const serverLeaseNamespace, serverLease = "evictionrequest-system", "evictionrequest-apiserver"

// A server stopped with SIGTERM gives the Lease of its controllers up
// before it exits (a watch of the Lease sees it held by no one between
// the old process and the new one), so the process that replaces it, here
// the server restarted, runs the controllers at once rather than a Lease
// duration later. Not in parallel: the server goes away.
func TestAStoppedServerGivesItsLeaseUpBeforeItExits(t *testing.T) {
	ctx := t.Context()
	leases := f.Kube.CoordinationV1().Leases(serverLeaseNamespace)
	var held *coordinationv1.Lease
	framework.Eventually(t, time.Minute, "the server to hold its Lease", func(ctx context.Context) error {
		lease, err := leases.Get(ctx, serverLease, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if ptr.Deref(lease.Spec.HolderIdentity, "") == "" {
			return errors.New("held by no one")
		}
		held = lease
		return nil
	})
	w, err := leases.Watch(ctx, metav1.ListOptions{
		FieldSelector:   fields.OneTermEqualSelector("metadata.name", serverLease).String(),
		ResourceVersion: held.ResourceVersion,
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
			lease, isLease := ev.Object.(*coordinationv1.Lease)
			if !isLease {
				t.Fatalf("watching the Lease: %v", ev.Object)
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
