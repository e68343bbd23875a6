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
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/evictionrequest/apiserver/internal/cachetest"
	"github.com/evictionrequest/apiserver/pkg/controller/lifecycle/stepaside"
	"github.com/evictionrequest/apiserver/pkg/controllermanager"
)

// --controllers reads as kube-controller-manager's: '*' runs those on by
// default, a name runs one, '-name' stops one whatever '*' says, and the
// flag may be repeated (as a component adds one to a Deployment's args).
func TestControllersFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{nil, []string{"step-aside-guard", "evictionrequest-controller", "imperative-eviction-responder-controller"}},
		{[]string{"--controllers=*,-evictionrequest-controller,-imperative-eviction-responder-controller", "--controllers=evictionrequest-node-drain,eviction-bridge",
			"--eviction-bridge-client-ca-file=ca.crt"},
			[]string{"evictionrequest-node-drain"}},
		{[]string{"--controllers=evictionrequest-controller"}, []string{"step-aside-guard", "evictionrequest-controller"}},
		{[]string{"--controllers=*,-imperative-eviction-responder-controller", "--enable-node-drain-controller"},
			[]string{"step-aside-guard", "evictionrequest-controller", "evictionrequest-node-drain"}},
		{[]string{"--enable-evictor=false"}, []string{"step-aside-guard", "evictionrequest-controller"}},
		{[]string{"--controllers="}, nil},
		{[]string{"--controllers=*,-step-aside-guard"}, []string{"evictionrequest-controller", "imperative-eviction-responder-controller"}},
	} {
		o := parseOptions(t, tc.args...)
		if err := o.Validate(); err != nil {
			t.Errorf("%v: %v", tc.args, err)
			continue
		}
		var got []string
		for _, d := range o.controllers(stepaside.New(stepaside.Config{})) {
			if d.Enabled {
				got = append(got, d.Name)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%v: controllers %v, want %v", tc.args, got, tc.want)
		}
	}
	if o := parseOptions(t, "--controllers=*,eviction-bridge", "--eviction-bridge-client-ca-file=ca.crt"); o.Validate() != nil || !o.Bridge.Enabled {
		t.Errorf("--controllers=*,eviction-bridge does not serve the bridge")
	}
	err := parseOptions(t, "--controllers=*,-evictionrequest-controler").Validate()
	if err == nil || !strings.Contains(err.Error(), `"-evictionrequest-controler" is not a controller`) {
		t.Errorf("a misspelled controller: %v, want it refused by name", err)
	}
}

// With the eviction API bridge the process's informers are shared by every
// term and started once, before the controllers are built: an informer a
// controller asks for only when it is built would never start. Every
// controller registers, before the start, every informer it reads.
func TestEveryControllerRegistersTheInformersItReads(t *testing.T) {
	o := parseOptions(t, "--controllers=*,evictionrequest-node-drain")
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	client := fake.NewClientset()
	factory := cachetest.KubeInformers(client, cacheTransform)
	descriptors := o.controllers(stepaside.New(stepaside.Config{Clock: clocktesting.NewFakeClock(time.Now())}))
	for _, d := range descriptors {
		if d.Enabled && d.Informers == nil {
			t.Errorf("%s registers no informers", d.Name)
		} else if d.Enabled {
			if err := d.Informers(factory); err != nil {
				t.Fatalf("%s: %v", d.Name, err)
			}
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer factory.Shutdown()
	defer cancel()
	factory.Start(ctx.Done())
	registered := factory.WaitForCacheSync(ctx.Done())
	cc := &controllermanager.Context{Client: client, EventClient: client, Informers: factory, Clock: clocktesting.NewFakeClock(time.Now())}
	for _, d := range descriptors {
		if !d.Enabled {
			continue
		}
		c, err := d.Init(ctx, cc)
		if err != nil {
			t.Fatalf("building %s: %v", d.Name, err)
		}
		if closer, ok := c.(controllermanager.Closer); ok {
			closer.Close(ctx)
		}
	}
	factory.Start(ctx.Done())
	for informer := range factory.WaitForCacheSync(ctx.Done()) {
		if _, ok := registered[informer]; !ok {
			t.Errorf("a controller asked for the informer of %v only when built", informer)
		}
	}
}

// parseOptions parses args as the command's flags.
func parseOptions(t *testing.T, args ...string) *Options {
	t.Helper()
	o := NewOptions()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	for _, named := range o.Flags().FlagSets {
		fs.AddFlagSet(named)
	}
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	o.Complete()
	return o
}
