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
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/features"
	genericapiserver "k8s.io/apiserver/pkg/server"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"

	"github.com/evictionrequest/apiserver/pkg/api/internalscheme"
	"github.com/evictionrequest/apiserver/pkg/apiserver"
	coordinationcontroller "github.com/evictionrequest/apiserver/pkg/controller/coordination"
	"github.com/evictionrequest/apiserver/pkg/controller/nodedrain"
	"github.com/evictionrequest/apiserver/pkg/controllermanager"
)

// parse registers the options' flags on a fresh flag set, parses args and
// decides which controllers run, as the command does before anything
// reads the options.
func parse(t *testing.T, args ...string) *Options {
	t.Helper()
	o := NewOptions()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	for _, named := range o.Flags().FlagSets {
		fs.AddFlagSet(named)
	}
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parsing %v: %v", args, err)
	}
	o.Controller.Complete()
	return o
}

// controllerManager applies the controller options to a server
// configuration without building the rest of it, which would bind the
// secure port.
func controllerManager(t *testing.T, o *Options) *controllermanager.Manager {
	t.Helper()
	config := &apiserver.Config{GenericConfig: genericapiserver.NewRecommendedConfig(internalscheme.Codecs)}
	config.GenericConfig.ClientConfig = &rest.Config{Host: "https://127.0.0.1:1"}
	// The server's generic factory, whose pod informer its run trims (trimPod).
	config.GenericConfig.SharedInformerFactory = informers.NewSharedInformerFactory(kubefake.NewClientset(), 0) //nolint:forbidigo // no cache is read
	if err := o.Controller.ApplyTo(config); err != nil {
		t.Fatal(err)
	}
	return config.ExtraConfig.Controllers
}

func TestDefaultOptionsValidate(t *testing.T) {
	o := parse(t, "--embedded-etcd-data-dir="+t.TempDir())
	if err := o.Complete(); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if err := o.Validate(); err != nil {
		t.Fatalf("the default options do not validate: %v", err)
	}
	if got := o.RecommendedOptions.Etcd.StorageConfig.Transport.ServerList; len(got) != 1 || !strings.HasPrefix(got[0], "http://127.0.0.1:") {
		t.Errorf("without --etcd-servers the storage must use the embedded etcd on loopback, got %v", got)
	}
}

func TestFlagsReachTheConfiguration(t *testing.T) {
	o := parse(t,
		"--etcd-servers=http://127.0.0.1:2379",
		"--concurrent-evictionrequest-syncs=3",
		"--kube-api-qps=7.5",
		"--kube-api-burst=9",
		"--kube-api-call-timeout=4s",
		"--controllers=*,evictionrequest-node-drain,-evictionrequest-ttl-after-complete",
		"--node-drain-requester-name=drain.example.com",
		"--leader-elect-resource-namespace=elsewhere",
		"--shutdown-watch-termination-grace-period=2s",
		"--disabled-metrics=evictionrequest_controller_active_requester",
	)
	if err := o.Complete(); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if err := o.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if o.EmbeddedEtcd.enabled {
		t.Errorf("the embedded etcd must stay off with --etcd-servers")
	}
	if got := o.Metrics.DisabledMetrics; len(got) != 1 || got[0] != "evictionrequest_controller_active_requester" {
		t.Errorf("--disabled-metrics: got %v", got)
	}
	if o.ShutdownWatchTerminationGracePeriod != 2*time.Second {
		t.Errorf("--shutdown-watch-termination-grace-period: got %s", o.ShutdownWatchTerminationGracePeriod)
	}

	c := o.Controller
	if c.Workers != 3 || c.Client.QPS != 7.5 || c.Client.Burst != 9 || c.Client.CallTimeout != 4*time.Second || c.NodeDrain.Requester != "drain.example.com" {
		t.Errorf("controller options: workers %d, client %+v, node drain requester %q", c.Workers, c.Client, c.NodeDrain.Requester)
	}
	m := controllerManager(t, o)
	if m == nil {
		t.Fatal("the controller is enabled by default but has no manager")
	}
	if qps := m.Client.CoreV1().RESTClient().GetRateLimiter().QPS(); qps != 7.5 {
		t.Errorf("the controllers' client sends %v requests/s, want 7.5", qps)
	}
	if le := m.LeaderElection; le.ResourceName != "evictionrequest-apiserver" || le.ResourceNamespace != "elsewhere" {
		t.Errorf("leader election on Lease %s/%s, want elsewhere/evictionrequest-apiserver", le.ResourceNamespace, le.ResourceName)
	}
	var enabled []string
	for _, d := range m.Controllers {
		if d.Enabled {
			enabled = append(enabled, d.Name)
		}
	}
	// -evictionrequest-ttl-after-complete keeps completed requests.
	if want := []string{coordinationcontroller.ControllerName, nodedrain.ControllerName}; !slices.Equal(enabled, want) {
		t.Errorf("enabled controllers %v, want %v", enabled, want)
	}
}

func TestDisabledControllerHasNoConfiguration(t *testing.T) {
	// The deprecated flag of earlier releases says what --controllers= says.
	for _, off := range []string{"--controllers=", "--enable-evictionrequest-controller=false"} {
		o := parse(t, "--etcd-servers=http://127.0.0.1:2379", off, "--concurrent-evictionrequest-syncs=0", "--completed-evictionrequest-ttl=0")
		if err := o.Complete(); err != nil {
			t.Fatalf("Complete: %v", err)
		}
		if err := o.Validate(); err != nil {
			t.Fatalf("%s: the controllers' flags must not be checked when they are off: %v", off, err)
		}
		if m := controllerManager(t, o); m != nil {
			t.Errorf("%s still configures controllers: %+v", off, m.Controllers)
		}
	}
}

func TestValidateNamesTheFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"--concurrent-evictionrequest-syncs=0"}, "--concurrent-evictionrequest-syncs"},
		{[]string{"--kube-api-qps=0"}, "--kube-api-qps"},
		{[]string{"--kube-api-burst=0"}, "--kube-api-burst"},
		{[]string{"--authorization-kube-api-qps=0"}, "--authorization-kube-api-qps"},
		{[]string{"--authorization-kube-api-burst=0"}, "--authorization-kube-api-burst"},
		{[]string{"--kube-api-call-timeout=0s"}, "--kube-api-call-timeout"},
		{[]string{"--controllers=*,evictionrequest-node-drain", "--node-drain-requester-name=Not_A_Name"}, "--node-drain-requester-name"},
		{[]string{"--controllers=*,evictionrequest-node-drain", "--concurrent-node-drain-syncs=0"}, "--concurrent-node-drain-syncs"},
		{[]string{"--controllers=*,evictionrequest-node-drain", "--node-drain-deadline=-1m"}, "--node-drain-deadline"},
		{[]string{"--completed-evictionrequest-ttl=0"}, "--completed-evictionrequest-ttl"},
		{[]string{"--controllers=*,evictionrequest-node-drian"}, `"evictionrequest-node-drian" is not a controller`},
		{[]string{"--controllers=-evictionrequest-node-drain", "--enable-node-drain-controller"}, "contradicts --enable-node-drain-controller"},
		{[]string{"--leader-elect-resource-lock=endpoints"}, "--leader-elect-resource-lock"},
		{[]string{"--leader-elect-resource-name="}, "--leader-elect-resource-name"},
		{[]string{"--leader-elect-lease-duration=5s", "--leader-elect-renew-deadline=10s"}, "--leader-elect-renew-deadline"},
		{[]string{"--shutdown-watch-termination-grace-period=-1s"}, "--shutdown-watch-termination-grace-period"},
		{[]string{"--embedded-etcd-data-dir="}, "--embedded-etcd-data-dir"},
		{[]string{"--anonymous-auth-paths=healthz"}, "--anonymous-auth-paths"},
		{[]string{"--embedded-etcd-client-port=23790", "--embedded-etcd-peer-port=23790"}, "--embedded-etcd-peer-port"},
		{[]string{"--controllers=eviction-bridge", "--eviction-bridge-client-ca-file=ca.crt"}, "without evictionrequest-coordination-controller"},
		{[]string{"--enable-eviction-bridge", "--enable-evictionrequest-controller=false", "--eviction-bridge-client-ca-file=ca.crt"}, "without evictionrequest-coordination-controller"},
		{[]string{"--controllers=*,eviction-bridge"}, "--eviction-bridge-client-ca-file"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			o := parse(t, append([]string{"--embedded-etcd-data-dir=" + t.TempDir()}, tc.args...)...)
			if err := o.Complete(); err != nil {
				t.Fatalf("Complete: %v", err)
			}
			err := o.Validate()
			if err == nil {
				t.Fatalf("%v validated", tc.args)
			}
			if !strings.Contains(err.Error(), tc.flag) {
				t.Errorf("the error does not name %s: %v", tc.flag, err)
			}
		})
	}
}

// TestEveryFlagHasOneSection guards --help: a flag registered in two
// sections would be printed twice, and the command would silently keep only
// the first.
func TestEveryFlagHasOneSection(t *testing.T) {
	seen := map[string]string{}
	for section, fs := range NewOptions().Flags().FlagSets {
		fs.VisitAll(func(f *pflag.Flag) {
			if other, ok := seen[f.Name]; ok {
				t.Errorf("--%s is in the sections %q and %q", f.Name, other, section)
			}
			seen[f.Name] = section
			if f.Usage == "" {
				t.Errorf("--%s has no help text", f.Name)
			}
		})
	}
	for _, name := range []string{"etcd-servers", "kube-api-qps", "disabled-metrics", "leader-elect", "v", "secure-port"} {
		if _, ok := seen[name]; !ok {
			t.Errorf("--%s is missing", name)
		}
	}
}

func TestHelpPrintsNamedSectionsAndVersion(t *testing.T) {
	cmd := NewCommandStartServer(context.Background(), NewOptions())
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs([]string{"--help"})
	if err := cmd.Execute(); err != nil {
		t.Fatalf("--help: %v", err)
	}
	for _, section := range []string{"Etcd flags:", "Controllers flags:", "Metrics flags:", "Logs flags:"} {
		if !strings.Contains(out.String(), section) {
			t.Errorf("--help lacks the section %q", section)
		}
	}

	out.Reset()
	cmd = NewCommandStartServer(context.Background(), NewOptions())
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"--version"})
	if err := cmd.Execute(); err != nil {
		t.Fatalf("--version: %v", err)
	}
	if !strings.HasPrefix(out.String(), "evictionrequest-apiserver version v") {
		t.Errorf("--version printed %q", out.String())
	}
}

// The storage defaults that keep the server lean: protobuf in etcd, and no
// watch cache snapshots (see the init of options.go).
func TestStorageDefaults(t *testing.T) {
	o := parse(t)
	if got := o.RecommendedOptions.Etcd.DefaultStorageMediaType; got != runtime.ContentTypeProtobuf {
		t.Errorf("--storage-media-type defaults to %q, want %q", got, runtime.ContentTypeProtobuf)
	}
	if utilfeature.DefaultFeatureGate.Enabled(features.ListFromCacheSnapshot) {
		t.Errorf("feature gate %s is on by default, want off", features.ListFromCacheSnapshot)
	}
}

// --anonymous-auth says what the server does: a request without credentials
// may be served as system:anonymous, a client certificate the server does
// not trust never is: delegated authentication fails on it, and the
// integration test TestAnonymousAuthEverywhere sees the 401.
func TestAnonymousAuthHelpSaysWhatTheServerDoes(t *testing.T) {
	var usage string
	for _, fs := range NewOptions().Flags().FlagSets {
		if f := fs.Lookup("anonymous-auth"); f != nil {
			usage = f.Usage
		}
	}
	if strings.Contains(usage, "unknown CA") || !strings.Contains(usage, "client certificate the server does not trust gets 401 Unauthorized") {
		t.Errorf("--anonymous-auth help %q does not say that an untrusted client certificate gets 401", usage)
	}
}
