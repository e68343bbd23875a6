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

package bridge

import (
	"slices"
	"testing"
)

// A caller's name is one entry of the callers annotation whatever it holds:
// a forged review's "someone,x" cannot leave "someone" recorded unmarked.
func TestACallerIsOneEntryOfTheTrail(t *testing.T) {
	forged := Eviction{User: "system:serviceaccount:kube-system:cluster-autoscaler,x"}.Caller()
	annotations := map[string]string{CallersAnnotation: addCaller(nil, "kubernetes-admin")}
	annotations[CallersAnnotation] = addCaller(annotations, forged)
	annotations[CallersAnnotation] = addCaller(annotations, "odd%2Cname")
	want := []string{"kubernetes-admin", forged, "odd%2Cname"}
	if got := Callers(annotations); !slices.Equal(got, want) {
		t.Errorf("callers %q, want %q (annotation %q)", got, want, annotations[CallersAnnotation])
	}
	// Recording the same caller again writes nothing new.
	if again := addCaller(annotations, "odd%2Cname"); again != annotations[CallersAnnotation] {
		t.Errorf("the same caller again changed the annotation: %q, was %q", again, annotations[CallersAnnotation])
	}
}
