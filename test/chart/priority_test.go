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
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// The components run at the built-in system-cluster-critical, as the
// metrics-server and descheduler charts' do, and the chart creates no
// PriorityClass unless the admin names one of their own; it refuses to
// create a system- class, which Kubernetes keeps for itself.
func TestThePodsRunAtSystemClusterCriticalUnlessTheAdminNamesAClass(t *testing.T) {
	all := []string{"--set=apis.lifecycle.enabled=true"}
	objects, err := helmTemplate(t, all...)
	if err != nil {
		t.Fatal(err)
	}
	if pc := find(objects, "PriorityClass", "system-cluster-critical"); pc != nil {
		t.Errorf("the chart renders the built-in PriorityClass system-cluster-critical")
	}
	checkPriorityClass(t, objects, "system-cluster-critical")

	own := append(all, "--set=priorityClass.create=true", "--set=priorityClass.name=acme-critical", "--set=priorityClass.value=5000")
	if objects, err = helmTemplate(t, own...); err != nil {
		t.Fatal(err)
	}
	pc := find(objects, "PriorityClass", "acme-critical")
	if pc == nil {
		t.Fatal("priorityClass.create=true rendered no PriorityClass acme-critical")
	}
	if value := pc.Object["value"]; value != int64(5000) && value != float64(5000) {
		t.Errorf("PriorityClass acme-critical has value %v, want 5000", value)
	}
	checkPriorityClass(t, objects, "acme-critical")

	_, err = helmTemplate(t, "--set=priorityClass.create=true")
	if err == nil || !strings.Contains(err.Error(), "priorityClass.create") || !strings.Contains(err.Error(), "system-cluster-critical") {
		t.Errorf("priorityClass.create=true of system-cluster-critical: %v, want a refusal naming the value and the class", err)
	}
}

// checkPriorityClass fails unless every Deployment's pods use class.
func checkPriorityClass(t *testing.T, objects []*unstructured.Unstructured, class string) {
	t.Helper()
	n := 0
	for _, obj := range objects {
		if obj.GetKind() != "Deployment" {
			continue
		}
		var d appsv1.Deployment
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &d); err != nil {
			t.Fatal(err)
		}
		n++
		if got := d.Spec.Template.Spec.PriorityClassName; got != class {
			t.Errorf("Deployment %s: priorityClassName %q, want %q", d.Name, got, class)
		}
	}
	if n == 0 {
		t.Error("no Deployment rendered")
	}
}

// NOTES.txt says what to set on each Kubernetes version evictionrequest-
// controller runs on: its controllers on 1.37, the actors only on 1.38 and
// later, where kube-controller-manager runs the controllers itself.
func TestTheNotesSayWhatToRunOnEachKubernetesVersion(t *testing.T) {
	for _, tc := range []struct {
		actorsOnly string
		want       []string
	}{
		{"false", []string{"as Kubernetes 1.37 needs", "On Kubernetes 1.38 and later", "set controller.actorsOnly=true"}},
		{"true", []string{"actors of Kubernetes' lifecycle.k8s.io/v1alpha1 only (controller.actorsOnly=true)", "On Kubernetes 1.37", "set controller.actorsOnly=false"}},
	} {
		t.Run("actorsOnly="+tc.actorsOnly, func(t *testing.T) {
			notes, err := runHelm("install", "evictionrequest", chartDir, "--dry-run=client", "--namespace="+namespace,
				"--set=apis.coordination.enabled=false", "--set=apis.lifecycle.enabled=true", "--set=controller.actorsOnly="+tc.actorsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range tc.want {
				if !strings.Contains(notes, want) {
					t.Errorf("NOTES.txt does not say %q:\n%s", want, notes)
				}
			}
		})
	}
}
