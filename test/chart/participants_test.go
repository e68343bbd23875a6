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

package chart

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/evictionrequest/apiserver/artifacts"
	"github.com/evictionrequest/apiserver/pkg/api/participants"
)

// rule is the --set arguments of participant rule i.
func rule(i int, fields ...string) []string {
	args := make([]string, 0, len(fields))
	for _, f := range fields {
		args = append(args, fmt.Sprintf("--set=participants.rules[%d].%s", i, f))
	}
	return args
}

// A rule that would make a pod invalid, or that adds nothing, fails helm
// install (and template) with a message naming the rule, the field and
// the API's rule, before any pod meets it.
func TestTheChartRefusesARuleThatWouldMakePodsInvalid(t *testing.T) {
	lifecycle := "--set=apis.lifecycle.enabled=true"
	var eleven []string
	for i := range 10 {
		eleven = append(eleven, rule(i, fmt.Sprintf("name=r%d", i), fmt.Sprintf("responder.name=example.com/r%d", i), "responder.priority=5000")...)
	}
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"a name that is no DNS label", rule(0, "name=Backup", "interceptor=backup.example.com"),
			[]string{"participants.rules[0].name", `"Backup"`, "DNS label"}},
		{"no participant", rule(0, "name=backup"), []string{"participants.rules[0] (rule backup)", "interceptor", "responder"}},
		{"an interceptor that is no DNS subdomain", rule(0, "name=backup", "interceptor=Backup_Example"),
			[]string{"participants.rules[0].interceptor", "DNS subdomain"}},
		{"a reserved interceptor", rule(0, "name=backup", "interceptor=backup.k8s.io"),
			[]string{"participants.rules[0].interceptor", "reserved for Kubernetes components", "deployment.apps.k8s.io"}},
		{"a responder without a domain", append(rule(0, "name=backup", "responder.name=backup", "responder.priority=5000"), lifecycle),
			[]string{"participants.rules[0].responder.name", "domain-prefixed key"}},
		{"a reserved responder", append(rule(0, "name=backup", "responder.name=backup.kubernetes.io/x", "responder.priority=5000"), lifecycle),
			[]string{"participants.rules[0].responder.name", "*.k8s.io and *.kubernetes.io are reserved"}},
		{"a reserved priority", append(rule(0, "name=backup", "responder.name=example.com/backup", "responder.priority=999"), lifecycle),
			[]string{"participants.rules[0].responder.priority 999", "0-999 are reserved"}},
		{"a priority above the maximum", append(rule(0, "name=backup", "responder.name=example.com/backup", "responder.priority=100001"), lifecycle),
			[]string{"participants.rules[0].responder.priority 100001", "1000 to 100000"}},
		{"no priority", append(rule(0, "name=backup", "responder.name=example.com/backup"), lifecycle),
			[]string{"participants.rules[0].responder.priority"}},
		{"eleven responders with the surge interceptor's", append(eleven, lifecycle),
			[]string{"11 different lifecycle.k8s.io responders", "at most 10 spec.evictionResponders"}},
		{"a responder on a release of coordination.k8s.io only", rule(0, "name=backup", "responder.name=example.com/backup", "responder.priority=5000"),
			[]string{"adds nothing this release serves", "apis.lifecycle.enabled"}},
		{"the surge rule's name", rule(0, "name=surge", "interceptor=backup.example.com"),
			[]string{`the rule name "surge" is taken by participants.surge`}},
		{"an owner kind the rules do not know", rule(0, "name=backup", "interceptor=backup.example.com", "ownerKinds={CronJob}"),
			[]string{"ownerKinds", "Deployment"}},
		{"a cluster without MutatingAdmissionPolicy v1", []string{"--kube-version=1.35.0"},
			[]string{"Kubernetes serves from 1.36 on", "participants.enabled=false"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := helmTemplate(t, tc.args...)
			if err == nil {
				t.Fatal("helm template accepted it")
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the error does not say %q:\n%v", want, err)
				}
			}
		})
	}
	// Ten are within the limit, the surge interceptor's among them.
	if _, err := helmTemplate(t, append(eleven[:len(eleven)-3], lifecycle)...); err != nil {
		t.Errorf("ten responders refused: %v", err)
	}
}

// The surge interceptor's rule is in every overlay that installs the
// surge interceptor, and a value turns every rule off.
func TestTheSurgeRuleIsInEveryOverlayWithTheSurgeInterceptor(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(chartDir, "ci", "*-values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	policy := participants.PolicyName("surge")
	for _, file := range files {
		scenario := strings.TrimSuffix(filepath.Base(file), "-values.yaml")
		t.Run(scenario, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("..", "..", "artifacts", "overlays", scenario, "install.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			objects, err := artifacts.Decode(data)
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			surgeInterceptor := false
			for _, obj := range objects {
				if obj.GetName() == policy {
					kinds = append(kinds, obj.GetKind())
				}
				surgeInterceptor = surgeInterceptor || obj.GetKind() == "Deployment" && obj.GetName() == "evictionrequest-surge-interceptor"
			}
			slices.Sort(kinds)
			if want := []string{"MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding"}; surgeInterceptor && !slices.Equal(kinds, want) {
				t.Errorf("the overlay installs the surge interceptor and %v named %s, want %v", kinds, policy, want)
			}
		})
	}
	for _, off := range []string{"--set=participants.enabled=false", "--set=participants.surge.enabled=false", "--set=surgeInterceptor.enabled=false"} {
		objects, err := helmTemplate(t, off)
		if err != nil {
			t.Fatal(err)
		}
		for _, obj := range objects {
			if strings.HasPrefix(obj.GetKind(), "MutatingAdmissionPolicy") {
				t.Errorf("with %s the chart renders %s %s", off, obj.GetKind(), obj.GetName())
			}
		}
	}
}
