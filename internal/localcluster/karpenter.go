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

package localcluster

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/evictionrequest/apiserver/artifacts"
)

// Karpenter's API, which the harness reaches through the dynamic client:
// the project does not build against Karpenter's module.
var (
	// NodePoolResource is Karpenter's NodePools.
	NodePoolResource = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodepools"}
	// NodeClaimResource is Karpenter's NodeClaims.
	NodeClaimResource = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodeclaims"}
	// crdResource is apiextensions.k8s.io's CRDs, which the project does
	// not otherwise import.
	crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	// kwokNodeClassResource is the node class of Karpenter's KWOK provider.
	kwokNodeClassResource = schema.GroupVersionResource{Group: "karpenter.kwok.sh", Version: "v1alpha1", Resource: "kwoknodeclasses"}
)

const (
	// KarpenterUser is the user Karpenter calls kube-apiserver as, a
	// member of system:masters as kwok is: the evictions of the audit log
	// and the callers the eviction API bridge records name it.
	KarpenterUser = "karpenter"
	// KarpenterNodeClass is the KWOKNodeClass the harness creates, which
	// the NodePools of NewKarpenterNodePool name.
	KarpenterNodeClass = "default"
	// NodePoolLabel is the label Karpenter gives the nodes of a NodePool,
	// its name; the declarative node drain's pool budget reads it
	// (--node-drain-pool-label).
	NodePoolLabel = "karpenter.sh/nodepool"
	// DisruptedTaint is the taint Karpenter puts on a node it disrupts
	// (consolidation, drift, expiry) before it drains it.
	DisruptedTaint = "karpenter.sh/disrupted"
	// karpenterCRDDir is where, under the bin dir, make tools copies the
	// CRDs of Karpenter's module.
	karpenterCRDDir = "karpenter-crds"
)

// karpenterInstanceTypes are the instance types of the harness's
// Karpenter (INSTANCE_TYPES_FILE_PATH), in place of the provider's 144:
// three sizes of one family in one zone, each twice the one before in
// size and price, so that a node left with a small pod is replaced by a
// cheaper one, and so that each scheduling simulation of Karpenter costs
// little on a shared machine.
const karpenterInstanceTypes = `[
{"name": "kwok-small", "architecture": "amd64", "operatingSystems": ["linux"], "resources": {"cpu": "2", "memory": "8Gi"},
 "offerings": [{"Price": 0.1, "Available": true, "Requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]}, {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-a"]}]}]},
{"name": "kwok-medium", "architecture": "amd64", "operatingSystems": ["linux"], "resources": {"cpu": "4", "memory": "16Gi"},
 "offerings": [{"Price": 0.2, "Available": true, "Requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]}, {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-a"]}]}]},
{"name": "kwok-large", "architecture": "amd64", "operatingSystems": ["linux"], "resources": {"cpu": "8", "memory": "32Gi"},
 "offerings": [{"Price": 0.4, "Available": true, "Requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]}, {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-a"]}]}]}
]
`

// startKarpenter installs Karpenter's CRDs and a KWOKNodeClass, and runs
// Karpenter's KWOK provider as a process of the cluster: not
// leader-elected, its metrics and health on free ports, with the settings
// of Config.KarpenterEnv. Its nodes carry kwok's label, so the kwok
// process runs them as it runs the others.
func (c *Cluster) startKarpenter(ctx context.Context) error {
	if _, err := os.Stat(c.bin("karpenter")); err != nil {
		return fmt.Errorf("karpenter is not built (make tools builds it into the bin dir): %w", err)
	}
	if err := c.installKarpenterCRDs(ctx); err != nil {
		return err
	}
	kubeconfig, err := c.writeKubeconfig("karpenter", loopbackURL("https", c.apiPort), c.pki.karpenter)
	if err != nil {
		return err
	}
	instanceTypes := c.path("karpenter-instance-types.json")
	if err := os.WriteFile(instanceTypes, []byte(karpenterInstanceTypes), 0o644); err != nil {
		return err
	}
	ports, err := c.reservePorts(2)
	if err != nil {
		return err
	}
	env := append([]string{
		"KUBECONFIG=" + kubeconfig,
		"INSTANCE_TYPES_FILE_PATH=" + instanceTypes,
		// One process, as kube-controller-manager and kube-scheduler here:
		// a leader-elected Karpenter exits when a renewal of its Lease
		// times out (it did, on a loaded machine, and the tests after it
		// waited for a Karpenter that was gone), and nothing here
		// restarts it as a Deployment's kubelet would.
		"DISABLE_LEADER_ELECTION=true",
		// Karpenter binds these on every address, not on loopback alone.
		"METRICS_PORT=" + strconv.Itoa(ports[0]),
		"HEALTH_PROBE_PORT=" + strconv.Itoa(ports[1]),
		"LOG_LEVEL=debug",
	}, c.cfg.KarpenterEnv...)
	p, err := c.run("karpenter", env, "karpenter")
	if err != nil {
		return err
	}
	p.MetricsURL = loopbackURL("http", ports[0]) + "/metrics"
	c.karpenter = p
	err = c.waitUntilReady(ctx, p, "karpenter", func(ctx context.Context) error {
		return httpGetOK(ctx, http.DefaultClient, loopbackURL("http", ports[1])+"/readyz", "ok")
	})
	if err != nil {
		return err
	}
	return c.createKarpenterNodeClass(ctx)
}

// Karpenter is the process of Karpenter, nil unless Config.Karpenter.
func (c *Cluster) Karpenter() *Process {
	return c.karpenter
}

// installKarpenterCRDs applies the CRDs make tools copied from Karpenter's
// module, and waits until kube-apiserver serves them.
func (c *Cluster) installKarpenterCRDs(ctx context.Context) error {
	dir := c.bin(karpenterCRDDir)
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("no CRDs of Karpenter in %s (make tools copies them from its module)", dir)
	}
	var crds []*unstructured.Unstructured
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		objects, err := artifacts.Decode(data)
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		crds = append(crds, objects...)
	}
	if err := c.Apply(ctx, crds, metav1.ApplyOptions{FieldManager: FieldManager, Force: true}); err != nil {
		return fmt.Errorf("installing Karpenter's CRDs: %w", err)
	}
	for _, crd := range crds {
		name := crd.GetName()
		err := pollUntil(ctx, "CRD "+name+" established", func(ctx context.Context) error {
			got, err := c.Dynamic.Resource(crdResource).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			return conditionTrue(got, "Established")
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// pollUntil calls check until it succeeds, at most startTimeout, and
// fails with its last error.
func pollUntil(ctx context.Context, what string, check func(context.Context) error) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, startTimeout, true, func(ctx context.Context) (bool, error) {
		last = check(ctx)
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("%s: not after %s: %w", what, startTimeout, errors.Join(last, err))
	}
	return nil
}

// createKarpenterNodeClass creates the KWOKNodeClass the NodePools name;
// its CRD defaults it to Ready.
func (c *Cluster) createKarpenterNodeClass(ctx context.Context) error {
	nodeClass := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": kwokNodeClassResource.GroupVersion().String(),
		"kind":       "KWOKNodeClass",
		"metadata":   map[string]any{"name": KarpenterNodeClass},
	}}
	callCtx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if _, err := c.Dynamic.Resource(kwokNodeClassResource).Create(callCtx, nodeClass, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating KWOKNodeClass %s: %w", KarpenterNodeClass, err)
	}
	return nil
}

// conditionTrue fails unless obj's status has the condition type True.
func conditionTrue(obj *unstructured.Unstructured, conditionType string) error {
	conditions, _, err := unstructured.NestedSlice(obj.Object, "status", "conditions")
	if err != nil {
		return err
	}
	for _, c := range conditions {
		cond, ok := c.(map[string]any)
		if !ok || cond["type"] != conditionType {
			continue
		}
		if cond["status"] == string(metav1.ConditionTrue) {
			return nil
		}
		return fmt.Errorf("%s is %v: %v %v", conditionType, cond["status"], cond["reason"], cond["message"])
	}
	return errors.New(conditionType + " is not reported yet")
}
