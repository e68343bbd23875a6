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

package main

import (
	"flag"
	"testing"
	"time"

	"k8s.io/kubernetes/pkg/kubelet"
)

// parseOptions parses kubelet-node's flags args after the required ones,
// as main does, and validates them.
func parseOptions(t *testing.T, args ...string) (*options, error) {
	t.Helper()
	o := newOptions()
	fs := flag.NewFlagSet("kubelet-node", flag.ContinueOnError)
	o.addFlags(fs)
	required := []string{"--kubeconfig=kubeconfig", "--node-name=node-0", "--dir=" + t.TempDir()}
	if err := fs.Parse(append(required, args...)); err != nil {
		t.Fatal(err)
	}
	return o, o.validate()
}

// --shutdown-grace-period=0 turns graceful node shutdown off, as its help
// says, whatever the share of critical pods would have been: the kubelet
// accepts the configuration, with both periods zero.
func TestShutdownGracePeriodZeroTurnsGracefulNodeShutdownOff(t *testing.T) {
	for _, args := range [][]string{
		{"--shutdown-grace-period=0"},
		{"--shutdown-grace-period=0", "--shutdown-grace-period-critical-pods=10s"},
	} {
		o, err := parseOptions(t, args...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		_, config, err := o.kubeletConfig()
		if err != nil {
			t.Fatalf("%v: the kubelet's configuration: %v", args, err)
		}
		if config.ShutdownGracePeriod.Duration != 0 || config.ShutdownGracePeriodCriticalPods.Duration != 0 {
			t.Errorf("%v: shutdownGracePeriod %s, shutdownGracePeriodCriticalPods %s; want both 0 (off)", args,
				config.ShutdownGracePeriod.Duration, config.ShutdownGracePeriodCriticalPods.Duration)
		}
	}
}

// A graceful node shutdown that is on keeps its settings, and those the
// kubelet would refuse are refused with the flags' names.
func TestShutdownGracePeriods(t *testing.T) {
	o, err := parseOptions(t, "--shutdown-grace-period=60s", "--shutdown-grace-period-critical-pods=10s")
	if err != nil {
		t.Fatal(err)
	}
	_, config, err := o.kubeletConfig()
	if err != nil {
		t.Fatal(err)
	}
	if config.ShutdownGracePeriod.Duration != time.Minute || config.ShutdownGracePeriodCriticalPods.Duration != 10*time.Second {
		t.Errorf("shutdownGracePeriod %s, shutdownGracePeriodCriticalPods %s; want 1m0s and 10s",
			config.ShutdownGracePeriod.Duration, config.ShutdownGracePeriodCriticalPods.Duration)
	}
	for _, args := range [][]string{
		{"--shutdown-grace-period=10s", "--shutdown-grace-period-critical-pods=20s"},
		{"--shutdown-grace-period=-1s"},
		{"--shutdown-grace-period=500ms", "--shutdown-grace-period-critical-pods=0"},
	} {
		if _, err := parseOptions(t, args...); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

// The node's configuration sets no package variable of the kubelet: two
// nodes in one process, or a test after another, would share it.
func TestTheKubeletConfigurationLeavesTheKubeletsGlobalsAlone(t *testing.T) {
	before := kubelet.ContainerLogsDir
	o, err := parseOptions(t)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := o.kubeletConfig(); err != nil {
		t.Fatal(err)
	}
	if kubelet.ContainerLogsDir != before {
		t.Errorf("kubelet.ContainerLogsDir = %q after the configuration, was %q", kubelet.ContainerLogsDir, before)
	}
}
