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
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func parse(t *testing.T, args ...string) *Options {
	t.Helper()
	o := NewOptions()
	fs := pflag.NewFlagSet("surge-interceptor", pflag.ContinueOnError)
	for _, named := range o.Flags().FlagSets {
		fs.AddFlagSet(named)
	}
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parsing %v: %v", args, err)
	}
	return o
}

func TestFlagsReachTheOptions(t *testing.T) {
	o := parse(t, "--name=surge.example.com", "--kube-api-qps=7", "--kube-api-burst=9", "--kube-api-call-timeout=4s",
		"--leader-elect-resource-namespace=elsewhere", "--leader-elect-lease-duration=20s")
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if o.Name != "surge.example.com" || o.Client.QPS != 7 || o.Client.Burst != 9 || o.Client.CallTimeout != 4*time.Second {
		t.Errorf("options %+v, client %+v", o, o.Client)
	}
	if le := o.LeaderElection; !le.LeaderElect || le.ResourceNamespace != "elsewhere" || le.LeaseDuration.Duration != 20*time.Second {
		t.Errorf("leader election %+v", le)
	}
}

func TestValidateNamesTheFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"--name=Not A Name"}, "--name"},
		{[]string{"--kube-api-qps=0"}, "--kube-api-qps"},
		{[]string{"--kube-api-call-timeout=0s"}, "--kube-api-call-timeout"},
		{[]string{"--poll-interval=0s"}, "--poll-interval"},
		{[]string{"--leader-elect-renew-deadline=20s"}, "--leader-elect-renew-deadline"},
		{[]string{"--leader-elect-resource-lock=endpoints"}, "--leader-elect-resource-lock"},
	} {
		err := parse(t, tc.args...).Validate()
		if err == nil || !strings.Contains(err.Error(), tc.flag) {
			t.Errorf("Validate() of %v = %v, want an error naming %s", tc.args, err, tc.flag)
		}
	}
}
