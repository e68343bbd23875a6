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

// Package leaderelect runs work only while this process holds a
// coordination.k8s.io/v1 Lease, campaigning again after it loses it. The
// server's in-process controllers and the SDK's interceptors use it.
package leaderelect

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
)

// Config says which Lease to hold and how.
type Config struct {
	// Namespace and Name of the Lease.
	Namespace, Name string
	// Identity of this process in the Lease; hostname_<random UUID> when empty.
	Identity string
	// LeaseDuration, RenewDeadline and RetryPeriod as in client-go's
	// leaderelection; 15s, 10s and 2s when zero.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// Healthz, when set, reports a leader that fails to renew its Lease
	// (leaderelection.NewLeaderHealthzAdaptor); serve it on a health check.
	Healthz *leaderelection.HealthzAdaptor
}

// Run runs term while this process holds the Lease, with a context that
// ends when the Lease is lost, and campaigns again after each term until ctx
// ends. A term always ends before the next campaign starts, so two terms of
// one process never overlap; a term that returns while still leading gives
// the Lease up, so that another replica takes over rather than a Lease being
// renewed by a process that does nothing. The term's context carries its
// fence (Fence), which the clients of FenceWrites check before they write.
func Run(ctx context.Context, leases coordinationv1client.LeasesGetter, cfg Config, term func(context.Context)) error {
	logger := klog.FromContext(ctx)
	identity := cfg.Identity
	if identity == "" {
		hostname, err := os.Hostname()
		if err != nil {
			hostname = "unknown"
		}
		identity = hostname + "_" + uuid.NewString()
	}
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: cfg.Namespace, Name: cfg.Name},
		Client:     leases,
		LockConfig: resourcelock.ResourceLockConfig{Identity: identity},
	}
	lease := klog.KRef(cfg.Namespace, cfg.Name)
	leaseDuration, renewDeadline := orDefault(cfg.LeaseDuration, 15*time.Second), orDefault(cfg.RenewDeadline, 10*time.Second)
	for ctx.Err() == nil {
		campaignCtx, cancelCampaign := context.WithCancel(ctx)
		// OnStartedLeading runs in a goroutine of client-go's; it hands the
		// term's context over so that the term runs here, where its end
		// can be waited for.
		acquired := make(chan context.Context, 1)
		elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock:            lock,
			Name:            cfg.Name,
			LeaseDuration:   leaseDuration,
			RenewDeadline:   renewDeadline,
			RetryPeriod:     orDefault(cfg.RetryPeriod, 2*time.Second),
			ReleaseOnCancel: true,
			WatchDog:        cfg.Healthz,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(termCtx context.Context) { acquired <- termCtx },
				OnStoppedLeading: func() {},
			},
		})
		if err != nil {
			cancelCampaign()
			return fmt.Errorf("leader election on Lease %s: %w", lease, err)
		}
		if cfg.Healthz != nil {
			cfg.Healthz.SetLeaderElection(elector)
		}
		campaignDone := make(chan struct{})
		go func() {
			defer close(campaignDone)
			elector.Run(campaignCtx)
		}()
		select {
		case termCtx := <-acquired:
			logger.Info("Acquired the leader election Lease", "lease", lease, "identity", identity)
			term(withFence(termCtx, fence(elector, leaseDuration, renewDeadline)))
			// Whether the Lease was lost or the term ended on its own, the
			// campaign ends, releasing a Lease still held.
			cancelCampaign()
			<-campaignDone
			logger.Info("Leadership term ended", "lease", lease, "identity", identity)
			// A term that ended on its own gave the Lease up: let another
			// replica take it before campaigning again.
			select {
			case <-ctx.Done():
			case <-time.After(orDefault(cfg.RetryPeriod, 2*time.Second)):
			}
		case <-campaignDone:
			// ctx ended before the Lease was acquired.
			cancelCampaign()
		}
	}
	return nil
}

// fence is the check of a term of elector (Fence): an error once the
// elector has read another holder in the Lease, and once its last
// renewal, by the process's monotonic clock, is older than the renew
// deadline. client-go's elector keeps the term running until its renew
// deadline passes even after it has read another holder (IsLeader is then
// false, and Check passes a non-leader), so the first case is checked here.
func fence(elector *leaderelection.LeaderElector, leaseDuration, renewDeadline time.Duration) func() error {
	return func() error {
		if !elector.IsLeader() {
			if holder := elector.GetLeader(); holder != "" {
				return fmt.Errorf("the leadership term is over: the Lease is held by %q", holder)
			}
			return errors.New("the leadership term is over: the Lease was given up")
		}
		// Check tolerates its argument past the lease duration; the
		// renew deadline comes before it.
		if err := elector.Check(renewDeadline - leaseDuration); err != nil {
			return fmt.Errorf("the leadership term may be over: no renewal of the Lease for longer than the renew deadline (%s): %w", renewDeadline, err)
		}
		return nil
	}
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
