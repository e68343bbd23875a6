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
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/internal/localcluster"
	lifecycleapi "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/surge"
)

// The APIs a campaign drains through, each on the control plane a user of
// it runs.
const (
	// apiCoordination is our coordination.k8s.io API: two server replicas
	// on a three-member etcd, the eviction API bridge.
	apiCoordination = "coordination"
	// apiLifecycle is Kubernetes 1.37's lifecycle.k8s.io with
	// evictionrequest-controller (its controllers, the node drain, the
	// bridge).
	apiLifecycle = "lifecycle"
	// apiUpstream is lifecycle.k8s.io with Kubernetes 1.38's controllers,
	// as kube-controller-manager runs them, and evictionrequest-controller
	// for the actors only.
	apiUpstream = "upstream"
)

var apis = []string{apiCoordination, apiLifecycle, apiUpstream}

// flavour is what a campaign does differently on each API: the control
// plane, the participants' names and how a pod declares them, the faults.
type flavour struct {
	api string
	// sdk is the API the slow participant speaks.
	sdk evictionapi.API
	// slow, silent and surge are the names of the participants.
	slow, silent, surge string
	// faults are the kinds of fault the schedule draws from.
	faults []string
}

// flavourOf is the flavour of api.
func flavourOf(api string) (flavour, error) {
	switch api {
	case apiCoordination:
		return flavour{api: api, sdk: evictionapi.Coordination, slow: slowParticipant, silent: silentParticipant, surge: surge.DefaultName,
			faults: []string{faultKillServer, faultFreezeServer, faultKillSurge, faultKillEtcd, faultRestartKubeAPIServer, faultFreezeEtcd, faultCutServerPath}}, nil
	case apiLifecycle:
		return flavour{api: api, sdk: evictionapi.Lifecycle, slow: slowResponder, silent: silentResponder, surge: surge.DefaultLifecycleName,
			faults: []string{faultKillController, faultFreezeController, faultKillSurge, faultRestartKubeEtcd, faultRestartKubeAPIServer}}, nil
	case apiUpstream:
		return flavour{api: api, sdk: evictionapi.Lifecycle, slow: slowResponder, silent: silentResponder, surge: surge.DefaultLifecycleName,
			faults: []string{faultKillUpstream, faultFreezeUpstream, faultKillController, faultKillSurge, faultRestartKubeEtcd, faultRestartKubeAPIServer}}, nil
	}
	return flavour{}, fmt.Errorf("unknown API %q: want one of %v", api, apis)
}

// lifecycle is true for the flavours of lifecycle.k8s.io.
func (f flavour) lifecycle() bool {
	return f.api != apiCoordination
}

// cluster is the configuration of the flavour's control plane: the node
// drain on, its pool and budget, the surge interceptor.
func (f flavour) cluster(o options, dir string, logf func(string, ...any)) localcluster.Config {
	cfg := localcluster.Config{
		Dir: dir, BinDir: o.binDir, Nodes: o.nodes + o.spare, SurgeInterceptor: true, WorkloadReplicas: o.replicas, Logf: logf,
		ServerArgs: []string{"--controllers=*,evictionrequest-node-drain", "--node-drain-pool-label=" + poolLabel,
			fmt.Sprintf("--max-concurrent-node-drains-per-pool=%d", poolBudget(o.nodes))},
		// kwok's nodes send their status every 20 to 25 s, where a kubelet
		// renews its Lease every 10 s: past a restart of kube-apiserver of
		// 20 s or more, they would miss the default grace period (50 s) that
		// a kubelet's node keeps, and the node lifecycle controller would
		// mark every pod of theirs not ready, which is no drain's doing.
		ControllerManagerArgs: []string{"--node-monitor-grace-period=2m"},
		// The bridge as an admin who needs its protection runs it.
		BridgeFailurePolicy: bridgeFailurePolicy,
	}
	if !f.lifecycle() {
		cfg.Overlay = "ha-bridge"
		return cfg
	}
	cfg.Lifecycle, cfg.Overlay, cfg.UpstreamControllers = true, localcluster.LifecycleBridgeOverlay, f.api == apiUpstream
	return cfg
}

// poolBudget is how many of the declarative drain's nodes (half of those
// drained) drain at once: half of them, at least 2, so that the drain's
// nodes go in two waves or so, each lasting up to the drain's deadline.
func poolBudget(drained int) int {
	return max(2, drained/2/2)
}

// declare makes a pod, or a Deployment's pod template, declare participant:
// in the annotation of our API, in spec.evictionResponders on lifecycle.
func (f flavour) declare(meta *map[string]string, spec *corev1.PodSpec, participant string) {
	if f.lifecycle() {
		spec.EvictionResponders = append(spec.EvictionResponders,
			corev1.EvictionResponder{Name: participant, Priority: ptr.To(lifecycleapi.ManagingControllerPriority)})
		return
	}
	if *meta == nil {
		*meta = map[string]string{}
	}
	(*meta)[v1alpha1.PodInterceptorsAnnotation] = participant
}
