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
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
)

// options are kubelet-node's flags: the few kubelet settings a test or the
// local control plane chooses; the rest are the kubelet's defaults.
type options struct {
	kubeconfig string
	nodeName   string
	dir        string
	// shutdownGracePeriod and shutdownGracePeriodCriticalPods are the
	// kubelet's graceful node shutdown settings; a zero shutdownGracePeriod
	// turns it off, and shutdownGracePeriodCriticalPods with it.
	shutdownGracePeriod, shutdownGracePeriodCriticalPods time.Duration
	nodeStatusUpdateFrequency                            time.Duration
	labels                                               string
	taints                                               string
	maxPods                                              int
}

func newOptions() *options {
	return &options{shutdownGracePeriod: 30 * time.Second, shutdownGracePeriodCriticalPods: 10 * time.Second,
		nodeStatusUpdateFrequency: 10 * time.Second, maxPods: 110}
}

func (o *options) addFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.kubeconfig, "kubeconfig", o.kubeconfig, "Kubeconfig of the node's credentials (system:node:NAME, group system:nodes).")
	fs.StringVar(&o.nodeName, "node-name", o.nodeName, "Name of the Node.")
	fs.StringVar(&o.dir, "dir", o.dir, "Directory of everything the node writes: the kubelet's root, the CRI socket, pod logs.")
	fs.DurationVar(&o.shutdownGracePeriod, "shutdown-grace-period", o.shutdownGracePeriod,
		"The kubelet's shutdownGracePeriod: how long a graceful node shutdown lasts; 0 turns graceful node shutdown off, "+
			"whatever --shutdown-grace-period-critical-pods says. "+
			"The kubelet learns of a shutdown from systemd-logind on the D-Bus system bus of DBUS_SYSTEM_BUS_ADDRESS.")
	fs.DurationVar(&o.shutdownGracePeriodCriticalPods, "shutdown-grace-period-critical-pods", o.shutdownGracePeriodCriticalPods,
		"The kubelet's shutdownGracePeriodCriticalPods: the part of --shutdown-grace-period kept for critical pods.")
	fs.DurationVar(&o.nodeStatusUpdateFrequency, "node-status-update-frequency", o.nodeStatusUpdateFrequency, "The kubelet's nodeStatusUpdateFrequency.")
	fs.StringVar(&o.labels, "node-labels", o.labels, "Labels of the Node: key=value,...")
	fs.StringVar(&o.taints, "register-with-taints", o.taints, "Taints of the Node: key=value:Effect,...")
	fs.IntVar(&o.maxPods, "max-pods", o.maxPods, "The most pods the node runs.")
}

func (o *options) validate() error {
	var errs []error
	for flag, value := range map[string]string{"--kubeconfig": o.kubeconfig, "--node-name": o.nodeName, "--dir": o.dir} {
		if value == "" {
			errs = append(errs, fmt.Errorf("%s is required", flag))
		}
	}
	if o.shutdownGracePeriod != 0 {
		errs = append(errs, o.validateShutdown()...)
	}
	if _, err := o.nodeLabels(); err != nil {
		errs = append(errs, err)
	}
	if _, err := o.nodeTaints(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// validateShutdown refuses, with the flags' names, the graceful node
// shutdown settings the kubelet would refuse (its validation) or run
// without graceful node shutdown.
func (o *options) validateShutdown() []error {
	var errs []error
	for flag, d := range map[string]time.Duration{"--shutdown-grace-period": o.shutdownGracePeriod,
		"--shutdown-grace-period-critical-pods": o.shutdownGracePeriodCriticalPods} {
		if d < 0 || (d > 0 && d < time.Second) {
			errs = append(errs, fmt.Errorf("%s (%s) must be 0 or at least 1s", flag, d))
		}
	}
	if o.shutdownGracePeriodCriticalPods > o.shutdownGracePeriod {
		errs = append(errs, fmt.Errorf("--shutdown-grace-period-critical-pods (%s) must be at most --shutdown-grace-period (%s)",
			o.shutdownGracePeriodCriticalPods, o.shutdownGracePeriod))
	}
	return errs
}

// criticalPodsShutdownGracePeriod is the kubelet's
// shutdownGracePeriodCriticalPods: none when graceful node shutdown is off.
func (o *options) criticalPodsShutdownGracePeriod() time.Duration {
	if o.shutdownGracePeriod == 0 {
		return 0
	}
	return o.shutdownGracePeriodCriticalPods
}

// nodeLabels parses --node-labels.
func (o *options) nodeLabels() (map[string]string, error) {
	labels := map[string]string{}
	for _, kv := range strings.Split(o.labels, ",") {
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("--node-labels: %q is not key=value", kv)
		}
		labels[k] = v
	}
	return labels, nil
}

// nodeTaints parses --register-with-taints.
func (o *options) nodeTaints() ([]v1.Taint, error) {
	var taints []v1.Taint
	for _, spec := range strings.Split(o.taints, ",") {
		if spec == "" {
			continue
		}
		kv, effect, ok := strings.Cut(spec, ":")
		if !ok {
			return nil, fmt.Errorf("--register-with-taints: %q is not key=value:Effect", spec)
		}
		k, v, _ := strings.Cut(kv, "=")
		taints = append(taints, v1.Taint{Key: k, Value: v, Effect: v1.TaintEffect(effect)})
	}
	return taints, nil
}
