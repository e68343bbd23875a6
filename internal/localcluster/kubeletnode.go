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
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/evictionrequest/apiserver/internal/logind"
)

// KubeletNodeLabel, set to "true", marks the nodes the upstream kubelet
// runs (kubelet-node), and KubeletNodeTaint keeps the pods that do not
// tolerate it off them: the pods of the kwok nodes' tests and workloads.
const (
	KubeletNodeLabel = "evictionrequest.github.io/kubelet-node"
	KubeletNodeTaint = KubeletNodeLabel
)

// ExitDelayAnnotation on a pod of a real kubelet node is how long its
// containers take to exit after SIGTERM ("20s"), as an application that
// finishes its work: kubelet-node's CRI runtime reads it. Without it a
// container exits at once; past its grace period it is killed. The runtime
// defines it too (cri.ExitDelayAnnotation): its module is built with
// Kubernetes' binaries and does not import this one, whose dependencies
// it would take into that build; a test keeps the two equal.
const ExitDelayAnnotation = "kubelet-node.evictionrequest.github.io/exit-delay"

// maxSocketPath is the longest path of a unix socket.
const maxSocketPath = 107

// KubeletNodeOptions shape a node run by the real kubelet.
type KubeletNodeOptions struct {
	// Name is the Node's name.
	Name string
	// ShutdownGracePeriod and ShutdownGracePeriodCriticalPods are the
	// kubelet's graceful node shutdown settings; a zero
	// ShutdownGracePeriod turns it off, whatever
	// ShutdownGracePeriodCriticalPods says.
	ShutdownGracePeriod, ShutdownGracePeriodCriticalPods time.Duration
	// NodeStatusUpdateFrequency is the kubelet's; 10s when zero.
	NodeStatusUpdateFrequency time.Duration
}

// KubeletNodePowerOffDelay is how long a real node's machine (node-host)
// runs on once the kubelet released its delay lock. The kubelet releases
// it as soon as its last pod stopped, while its status manager may not
// have written that pod's terminal phase yet
// (kubernetes/kubernetes#110755): a machine that went at once left the
// pod Running in the API, on a node that is gone, whenever the test
// machine was loaded. A real machine takes what its services take to
// stop; these give the kubelet's last writes this long.
const KubeletNodePowerOffDelay = 5 * time.Second

// DefaultKubeletNodeOptions are the options of the nodes of
// Config.KubeletNodes: graceful node shutdown on, with a grace period
// long enough for a surge to bring a replacement up.
func DefaultKubeletNodeOptions(name string) KubeletNodeOptions {
	return KubeletNodeOptions{Name: name, ShutdownGracePeriod: 60 * time.Second, ShutdownGracePeriodCriticalPods: 10 * time.Second}
}

// startKubeletNodes starts the nodes of Config.KubeletNodes.
func (c *Cluster) startKubeletNodes(ctx context.Context) error {
	for i := 0; i < c.cfg.KubeletNodes; i++ {
		n, err := c.StartKubeletNode(ctx, DefaultKubeletNodeOptions(fmt.Sprintf("kubelet-node-%d", i)))
		if err != nil {
			return err
		}
		c.KubeletNodes = append(c.KubeletNodes, n)
	}
	return nil
}

// KubeletNode is a node run by the upstream kubelet: a machine (node-host)
// with a logind stand-in on a private D-Bus system bus (Debian's
// dbus-daemon), and the kubelet (kubelet-node) on a CRI runtime without
// containers. Everything it writes is in its directory.
type KubeletNode struct {
	Name string
	// Dir holds the node's kubelet, bus and logs.
	Dir string
	// BusAddress is the node's system bus.
	BusAddress string

	c          *Cluster
	bus, host  *Process
	socketsDir string
}

// StartKubeletNode starts a node run by the real kubelet and returns once
// it is Ready. Stop, or the cluster's Stop, stops it.
func (c *Cluster) StartKubeletNode(ctx context.Context, opts KubeletNodeOptions) (*KubeletNode, error) {
	n := &KubeletNode{Name: opts.Name, Dir: c.path("nodes", opts.Name), c: c}
	if err := os.MkdirAll(n.Dir, 0o755); err != nil {
		return nil, err
	}
	if err := n.startBus(); err != nil {
		n.Stop()
		return nil, err
	}
	if err := n.startHost(ctx, opts); err != nil {
		n.Stop()
		return nil, err
	}
	return n, nil
}

// startBus starts the node's dbus-daemon and waits for its socket.
func (n *KubeletNode) startBus() error {
	n.socketsDir = n.Dir
	if len(filepath.Join(n.Dir, "bus.sock")) > maxSocketPath {
		// A cluster deep in the file system: the socket goes to a short
		// directory of its own, removed with the node.
		dir, err := os.MkdirTemp("", "node-")
		if err != nil {
			return err
		}
		n.socketsDir = dir
	}
	socket := filepath.Join(n.socketsDir, "bus.sock")
	config := filepath.Join(n.Dir, "bus.conf")
	address, err := logind.WriteBusConfig(config, socket)
	if err != nil {
		return err
	}
	n.BusAddress = address
	// Written for local-up node, which finds the bus by the node's name.
	if err := os.WriteFile(filepath.Join(n.Dir, "bus.address"), []byte(address), 0o644); err != nil {
		return err
	}
	if n.bus, err = n.c.runNodeProcess(n.Name+"-dbus", nil, "dbus-daemon", "--config-file="+config, "--nofork", "--nopidfile"); err != nil {
		return fmt.Errorf("%w (dbus-daemon is Debian's dbus: hack/install-debian-packages.sh)", err)
	}
	return waitFor(context.Background(), n.bus, "the node's D-Bus", func(context.Context) error {
		return logind.BusListening(socket)
	})
}

// startHost starts the machine and its kubelet, and waits for the Node to
// be Ready.
func (n *KubeletNode) startHost(ctx context.Context, opts KubeletNodeOptions) error {
	c := n.c
	pair, err := c.pki.clusterCA.sign(n.Dir, certRequest{name: "kubelet", commonName: "system:node:" + n.Name,
		organization: []string{"system:nodes"}, usage: x509.ExtKeyUsageClientAuth})
	if err != nil {
		return err
	}
	kubeconfig, err := c.writeKubeconfig(filepath.Join("nodes", n.Name, "kubelet"), loopbackURL("https", c.apiPort), pair)
	if err != nil {
		return err
	}
	status := opts.NodeStatusUpdateFrequency
	if status == 0 {
		status = 10 * time.Second
	}
	// logind's longest delay covers the kubelet's grace period: a shorter
	// one would make the kubelet rewrite logind's configuration.
	delayMax := opts.ShutdownGracePeriod + time.Minute
	n.host, err = c.runNodeProcess(n.Name, nil, c.bin("node-host"), "--bus="+n.BusAddress, "--inhibit-delay-max="+delayMax.String(),
		"--power-off-delay="+KubeletNodePowerOffDelay.String(), "--",
		c.bin("kubelet-node"), "--kubeconfig="+kubeconfig, "--node-name="+n.Name, "--dir="+n.Dir,
		"--shutdown-grace-period="+opts.ShutdownGracePeriod.String(), "--shutdown-grace-period-critical-pods="+opts.ShutdownGracePeriodCriticalPods.String(),
		"--node-status-update-frequency="+status.String(),
		"--node-labels="+KubeletNodeLabel+"=true", "--register-with-taints="+KubeletNodeTaint+"=true:NoSchedule")
	if err != nil {
		return err
	}
	err = waitFor(ctx, n.host, "node "+n.Name, func(ctx context.Context) error {
		node, err := c.Client.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !nodeReady(node) {
			return fmt.Errorf("node %s is not Ready", n.Name)
		}
		return nil
	})
	if err != nil {
		return err
	}
	// Written for local-up node kill, once the machine that started is the
	// one that runs: waitFor starts again one that dies while it starts.
	return os.WriteFile(filepath.Join(n.Dir, "host.pid"), []byte(strconv.Itoa(n.host.Pid())), 0o644)
}

// Shutdown shuts the node down gracefully, as systemctl poweroff does:
// logind signals PrepareForShutdown(true), the kubelet stops its pods, and
// the machine powers off (PoweredOff) once the kubelet released its delay
// lock.
func (n *KubeletNode) Shutdown(ctx context.Context) error {
	return logind.PowerOff(ctx, n.BusAddress)
}

// CancelShutdown calls off a graceful shutdown under way: logind signals
// PrepareForShutdown(false). It says whether there was one to call off.
func (n *KubeletNode) CancelShutdown(ctx context.Context) (bool, error) {
	return logind.CancelShutdown(ctx, n.BusAddress)
}

// PoweredOff is closed once the machine is off: after a graceful shutdown,
// or Kill.
func (n *KubeletNode) PoweredOff() <-chan struct{} {
	return n.host.Done()
}

// Kill cuts the machine's power: the kubelet dies without a word, as in a
// non-graceful node shutdown.
func (n *KubeletNode) Kill() {
	n.host.Kill()
}

// Stop stops the node's processes and removes what it kept outside its
// directory; its Node object stays.
func (n *KubeletNode) Stop() {
	for _, p := range []*Process{n.host, n.bus} {
		if p != nil {
			p.Stop()
			n.c.untrack(p)
		}
	}
	if n.socketsDir != "" && n.socketsDir != n.Dir {
		_ = os.RemoveAll(n.socketsDir)
	}
}

// runNodeProcess starts a process of a node: the cluster stops it with the
// others, but its exit is not a component's failure (a node powers off).
func (c *Cluster) runNodeProcess(name string, env []string, bin string, args ...string) (*Process, error) {
	if !filepath.IsAbs(bin) && !strings.Contains(bin, "/") {
		path, err := exec.LookPath(bin)
		if err != nil {
			return nil, err
		}
		bin = path
	}
	p, err := startProcess(name, c.logDir, c.pids, env, bin, args...)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.processes = append(c.processes, p)
	c.mu.Unlock()
	return p, nil
}

// KubeletNodeBus is the bus address of the node name of the cluster in dir,
// for another process than the one that started it (local-up node).
func KubeletNodeBus(dir, name string) (string, error) {
	data, err := os.ReadFile(filepath.Join(dir, "nodes", name, "bus.address"))
	if err != nil {
		return "", fmt.Errorf("node %s of %s: %w", name, dir, err)
	}
	return strings.TrimSpace(string(data)), nil
}

// KillKubeletNode kills the machine of the node name of the cluster in dir,
// from another process than the one that started it (local-up node kill).
// It kills the pid of the node's host.pid only while that is still the
// node's machine: the machine may have gone, and another process taken
// its pid.
func KillKubeletNode(dir, name string) error {
	pid, err := kubeletNodeHost(dir, name)
	if err != nil {
		return err
	}
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// kubeletNodeHost is the pid of the running machine of the node name of
// the cluster in dir: the pid of its host.pid, if that process is a
// node-host on the node's bus, which its command line says (as
// killLeftovers tells the cluster's processes by theirs).
func kubeletNodeHost(dir, name string) (int, error) {
	data, err := os.ReadFile(filepath.Join(dir, "nodes", name, "host.pid"))
	if err != nil {
		return 0, fmt.Errorf("node %s of %s: %w", name, dir, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 1 {
		return 0, fmt.Errorf("node %s: bad pid %q", name, data)
	}
	bus, err := KubeletNodeBus(dir, name)
	if err != nil {
		return 0, err
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || len(cmdline) == 0 {
		// An exited process that is not reaped yet has no command line.
		return 0, fmt.Errorf("node %s: its machine (pid %d) is not running", name, pid)
	}
	args := strings.Split(strings.TrimSuffix(string(cmdline), "\x00"), "\x00")
	if filepath.Base(args[0]) != "node-host" || !slices.Contains(args, "--bus="+bus) {
		return 0, fmt.Errorf("node %s: its machine (pid %d) is not running: that pid is now another process's (%s), left alone", name, pid, args[0])
	}
	return pid, nil
}
