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
	"strings"
	"testing"
)

func TestDefaultsAreValid(t *testing.T) {
	if err := NewOptions().Validate(); err != nil {
		t.Fatal(err)
	}
}

// Bad flags are refused with an error naming the flag, before anything runs.
func TestBadFlagsAreRefusedByName(t *testing.T) {
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"a deadline kube-apiserver refuses": {[]string{"--responder-heartbeat-deadline=5m"}, "--responder-heartbeat-deadline"},
		"a reserved requester name":         {[]string{"--enable-node-drain-controller", "--node-drain-requester-name=drain.k8s.io/x"}, "--node-drain-requester-name"},
		"a requester name without domain":   {[]string{"--enable-node-drain-controller", "--node-drain-requester-name=drain"}, "--node-drain-requester-name"},
		"no workers":                        {[]string{"--concurrent-evictionrequest-syncs=0"}, "--concurrent-evictionrequest-syncs"},
		"no client budget":                  {[]string{"--kube-api-qps=0"}, "--kube-api-qps"},
		"a node drain both on and off":      {[]string{"--enable-node-drain-controller", "--controllers=*,-evictionrequest-node-drain"}, "--controllers=-evictionrequest-node-drain contradicts --enable-node-drain-controller"},
		"a bridge both on and off":          {[]string{"--enable-eviction-bridge", "--controllers=-eviction-bridge"}, "--controllers=-eviction-bridge contradicts --enable-eviction-bridge"},
		"a bridge serving any caller":       {[]string{"--enable-eviction-bridge"}, "--eviction-bridge-allow-unauthenticated-callers"},
	} {
		t.Run(name, func(t *testing.T) {
			cmd := NewCommand(context.Background())
			cmd.SetArgs(tc.args)
			cmd.SetOut(&strings.Builder{})
			cmd.SetErr(&strings.Builder{})
			err := cmd.Execute()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one naming %s", err, tc.want)
			}
		})
	}
}
