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

package controllermanager

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	componentbaseconfig "k8s.io/component-base/config"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	// Every manager that elects a leader reports
	// leader_election_master_status{name=<Lease>} on /metrics, as
	// kube-controller-manager does: the "no leader" alert reads it.
	_ "k8s.io/component-base/metrics/prometheus/clientgo/leaderelection"

	versioned "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned"
	"github.com/evictionrequest/apiserver/pkg/generated/informers/externalversions"
	"github.com/evictionrequest/apiserver/pkg/util/leaderelect"
)

// leaderHealthTimeout is how long past its renew deadline a leader may go
// without renewing its Lease before /healthz fails, as
// kube-controller-manager's.
const leaderHealthTimeout = 20 * time.Second

// Manager runs controllers while the process holds its Lease, each term on
// informers of its own, so that nothing of a lost term acts in the next.
type Manager struct {
	// Name is the component's, the name of its logger.
	Name string
	// LeaderElection names the Lease and its timings; with LeaderElect off
	// the controllers run at once, for as long as Run runs.
	LeaderElection componentbaseconfig.LeaderElectionConfiguration
	// Client, EventClient and EvictionRequests are the term contexts'
	// clients; EvictionRequests may be nil.
	Client, EventClient kubernetes.Interface
	EvictionRequests    versioned.Interface
	// SharedInformers, when set, are the process's informers, which their
	// owner starts and stops (evictionrequest-apiserver shares its pod
	// cache with admission): every term gets them instead of informers of
	// its own, and its controllers must remove their handlers (Closer).
	SharedInformers informers.SharedInformerFactory
	// InformerOptions and EvictionRequestInformerOptions tune each term's
	// own informers: a namespace, a cache transform.
	InformerOptions                []informers.SharedInformerOption
	EvictionRequestInformerOptions []externalversions.SharedInformerOption
	// Clock is the term contexts' clock; the real one when nil.
	Clock clock.WithTicker
	// Metrics, when set, serves /metrics, /healthz (with the leader
	// check) and /readyz while Run runs; an API server serves them itself
	// and adds HealthChecks to its own.
	Metrics *MetricsServer
	// ReadyChecks are added to /readyz of Metrics: what the
	// process serves besides its controllers, such as the eviction API
	// bridge, on every replica.
	ReadyChecks []healthz.HealthChecker
	// Controllers are the controllers, built in this order each term.
	Controllers []Descriptor

	healthOnce sync.Once
	health     *leaderelection.HealthzAdaptor
}

// HealthChecks are the manager's checks for /healthz: a leader that fails
// to renew its Lease fails it, so that it is restarted.
func (m *Manager) HealthChecks() []healthz.HealthChecker {
	if !m.LeaderElection.LeaderElect {
		return nil
	}
	return []healthz.HealthChecker{m.leaderHealth()}
}

func (m *Manager) leaderHealth() *leaderelection.HealthzAdaptor {
	m.healthOnce.Do(func() { m.health = leaderelection.NewLeaderHealthzAdaptor(leaderHealthTimeout) })
	return m.health
}

// Run runs the controllers until ctx ends: while the process holds the
// Lease, or at once when leader election is off. Without leader election
// a controller that fails ends Run with its error; with it, the term ends,
// the Lease is given up and campaigned for again.
func (m *Manager) Run(ctx context.Context) error {
	ctx = klog.NewContext(ctx, klog.LoggerWithName(klog.FromContext(ctx), m.Name))
	stopServing, err := Serve(ctx, m.Metrics, m.HealthChecks(), m.ReadyChecks)
	if err != nil {
		return err
	}
	defer stopServing()
	if !m.LeaderElection.LeaderElect {
		return m.runTerm(ctx)
	}
	le := m.LeaderElection
	return leaderelect.Run(ctx, m.Client.CoordinationV1(), leaderelect.Config{
		Namespace:     le.ResourceNamespace,
		Name:          le.ResourceName,
		LeaseDuration: le.LeaseDuration.Duration,
		RenewDeadline: le.RenewDeadline.Duration,
		RetryPeriod:   le.RetryPeriod.Duration,
		Healthz:       m.leaderHealth(),
	}, func(ctx context.Context) {
		if err := m.runTerm(ctx); err != nil {
			klog.FromContext(ctx).Error(err, "Controllers failed, giving the Lease up")
		}
	})
}

// RegisterInformers registers the informers of the enabled controllers on
// SharedInformers, which their owner must start afterwards: informers
// asked for once the factory started would never start.
func (m *Manager) RegisterInformers() error {
	for _, d := range m.Controllers {
		if d.Enabled && d.Informers != nil {
			if err := d.Informers(m.SharedInformers); err != nil {
				return fmt.Errorf("%s: %w", d.Name, err)
			}
		}
	}
	return nil
}

// newContext is the context of a new term, with informers of its own
// unless the manager shares the process's.
func (m *Manager) newContext() *Context {
	cc := &Context{Client: m.Client, EventClient: m.EventClient, EvictionRequests: m.EvictionRequests, Clock: m.Clock, Informers: m.SharedInformers}
	if cc.EventClient == nil {
		cc.EventClient = m.Client
	}
	if cc.Clock == nil {
		cc.Clock = clock.RealClock{}
	}
	if cc.Informers == nil {
		cc.Informers = informers.NewSharedInformerFactoryWithOptions(m.Client, 0, m.InformerOptions...)
	}
	if m.EvictionRequests != nil {
		cc.EvictionRequestInformers = externalversions.NewSharedInformerFactoryWithOptions(m.EvictionRequests, 0, m.EvictionRequestInformerOptions...)
	}
	return cc
}

// runTerm builds the controllers of one term, starts the term's informers,
// runs the controllers until ctx ends or one fails, and waits for them and
// for the informers.
func (m *Manager) runTerm(ctx context.Context) error {
	cc := m.newContext()
	defer m.shutdown(cc)
	controllers, names, err := m.build(ctx, cc)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	m.start(ctx, cc)
	var wg sync.WaitGroup
	errs := make([]error, len(controllers))
	for i, c := range controllers {
		wg.Go(func() {
			if err := c.Run(named(ctx, names[i])); err != nil {
				errs[i] = fmt.Errorf("%s: %w", names[i], err)
				cancel(errs[i])
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// build builds the enabled controllers in order. When one fails, those
// built before it are closed: handlers of theirs on shared informers, which
// outlive the term, must not stay.
func (m *Manager) build(ctx context.Context, cc *Context) ([]Controller, []string, error) {
	var controllers []Controller
	var names []string
	for _, d := range m.Controllers {
		if !d.Enabled {
			continue
		}
		var err error
		if d.Informers != nil {
			err = d.Informers(cc.Informers)
		}
		var c Controller
		if err == nil {
			c, err = d.Init(named(ctx, d.Name), cc)
		}
		if err != nil {
			for _, built := range controllers {
				if closer, ok := built.(Closer); ok {
					closer.Close(ctx)
				}
			}
			return nil, nil, fmt.Errorf("starting %s: %w", d.Name, err)
		}
		controllers = append(controllers, c)
		names = append(names, d.Name)
	}
	return controllers, names, nil
}

// start starts the term's own informers; shared ones are their owner's.
func (m *Manager) start(ctx context.Context, cc *Context) {
	if m.SharedInformers == nil {
		cc.Informers.Start(ctx.Done())
	}
	if cc.EvictionRequestInformers != nil {
		cc.EvictionRequestInformers.Start(ctx.Done())
	}
}

// shutdown waits for the term's own informers, once ctx has ended.
func (m *Manager) shutdown(cc *Context) {
	if m.SharedInformers == nil {
		cc.Informers.Shutdown()
	}
	if cc.EvictionRequestInformers != nil {
		cc.EvictionRequestInformers.Shutdown()
	}
}

func named(ctx context.Context, name string) context.Context {
	return klog.NewContext(ctx, klog.LoggerWithName(klog.FromContext(ctx), name))
}
