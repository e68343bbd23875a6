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

package apiserver

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapiserver "k8s.io/apiserver/pkg/server"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	basecompatibility "k8s.io/component-base/compatibility"
	componentbaseconfig "k8s.io/component-base/config"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/api/internalscheme"
	"github.com/evictionrequest/apiserver/pkg/controllermanager"
)

// newGenericServer is a generic API server that serves nothing, to run
// hooks on.
func newGenericServer(t *testing.T) *genericapiserver.GenericAPIServer {
	t.Helper()
	config := genericapiserver.NewConfig(internalscheme.Codecs)
	config.EffectiveVersion = basecompatibility.NewEffectiveVersionFromString("", "", "")
	config.LoopbackClientConfig = &rest.Config{}
	config.ExternalAddress = "127.0.0.1:443"
	server, err := config.Complete(nil).New("test", genericapiserver.NewEmptyDelegate())
	if err != nil {
		t.Fatal(err)
	}
	return server
}

// The server's shutdown stops its controllers before it stops serving: its
// pre-shutdown hooks return only once the controllers its post-start hooks
// started returned and gave their Lease up.
func TestTheServersShutdownWaitsForItsControllersToGiveTheirLeaseUp(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	client := k8sfake.NewClientset()
	running := make(chan struct{})
	var stopped atomic.Bool
	m := &controllermanager.Manager{
		Name:   "test",
		Client: client,
		LeaderElection: componentbaseconfig.LeaderElectionConfiguration{
			LeaderElect: true, ResourceNamespace: "kube-system", ResourceName: "test",
			LeaseDuration: metav1.Duration{Duration: time.Minute}, RenewDeadline: metav1.Duration{Duration: 30 * time.Second},
			RetryPeriod: metav1.Duration{Duration: 50 * time.Millisecond},
		},
		Controllers: []controllermanager.Descriptor{{Name: "slow-to-stop", Enabled: true,
			Init: func(context.Context, *controllermanager.Context) (controllermanager.Controller, error) {
				return controllermanager.RunFunc(func(ctx context.Context) error {
					close(running)
					<-ctx.Done()
					time.Sleep(200 * time.Millisecond)
					stopped.Store(true)
					return nil
				}), nil
			}}},
	}
	generic := newGenericServer(t)
	s := &EvictionRequestServer{GenericAPIServer: generic}
	if err := s.installControllers(completedConfig{ExtraConfig: &ExtraConfig{Controllers: m, Clock: clock.RealClock{}}}); err != nil {
		t.Fatal(err)
	}
	generic.RunPostStartHooks(ctx)
	select {
	case <-running:
	case <-time.After(time.Minute):
		t.Fatal("the controllers never ran")
	}

	if err := generic.RunPreShutdownHooks(); err != nil {
		t.Fatalf("pre-shutdown hooks: %v", err)
	}
	if !stopped.Load() {
		t.Error("the pre-shutdown hooks returned while the controllers still ran")
	}
	lease, err := client.CoordinationV1().Leases("kube-system").Get(ctx, "test", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if holder := ptr.Deref(lease.Spec.HolderIdentity, ""); holder != "" {
		t.Errorf("the Lease is still held by %q once the pre-shutdown hooks returned", holder)
	}
}
