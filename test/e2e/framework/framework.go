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

// Package framework gives the e2e tests a running local control plane and
// the helpers every test needs: namespaces, pods on kwok nodes, kubectl, and
// waiting for a condition.
package framework

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/evictionrequest/apiserver/pkg/controller/nodedrain"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/evictionrequest/apiserver/internal/localcluster"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	versioned "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned"
	evrclient "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned/typed/coordination/v1alpha1"
)

var (
	binDir     = flag.String("bin-dir", "../../_output/bin", "Directory of the cluster binaries and evictionrequest-apiserver.")
	clusterDir = flag.String("cluster-dir", "../../_output/e2e", "Directory of the e2e cluster; its logs/ stay for the failure report.")
	overlay    = flag.String("overlay", localcluster.DefaultOverlay, "Overlay of artifacts/ the e2e cluster deploys: default, or ha (two replicas of the server on a three-member etcd).")
)

// Framework is the cluster every e2e test shares, reached through
// kube-apiserver as users reach it.
type Framework struct {
	*localcluster.Cluster
	// Kube is an admin clientset of kube-apiserver.
	Kube kubernetes.Interface
	// Clientset is the generated EvictionRequest clientset, through the aggregator.
	Clientset versioned.Interface
}

// Run starts the cluster, runs the tests and stops every process it
// started, whatever the tests did. It is the body of TestMain.
func Run(m *testing.M, f **Framework) int {
	return RunWith(m, f, nil)
}

// RunWith is Run on a cluster whose configuration mutate changes, such as
// one of the lifecycle.k8s.io API.
func RunWith(m *testing.M, f **Framework, mutate func(*localcluster.Config)) int {
	flag.Parse()
	ctx := context.Background()
	cfg := localcluster.Config{
		Dir:              *clusterDir,
		BinDir:           *binDir,
		Overlay:          *overlay,
		ServerArgs:       NodeDrainArgs(),
		SurgeInterceptor: true,
		Logf:             func(format string, args ...any) { fmt.Fprintf(os.Stderr, "e2e: "+format+"\n", args...) },
	}
	if mutate != nil {
		mutate(&cfg)
	}
	cluster, err := localcluster.Start(ctx, cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: starting the local control plane: %v\n", err)
		return 1
	}
	defer cluster.Stop()
	clientset, err := versioned.NewForConfig(cluster.AdminConfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	*f = &Framework{Cluster: cluster, Kube: cluster.Client, Clientset: clientset}
	code := m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "e2e: component logs are in %s\n", cluster.LogDir())
	}
	return code
}

// EvictionRequests is the EvictionRequest client of namespace ns.
func (f *Framework) EvictionRequests(ns string) evrclient.EvictionRequestInterface {
	return f.Clientset.CoordinationV1alpha1().EvictionRequests(ns)
}

// NewNamespace creates a namespace for the test, named after it, deleted
// when the test ends; it waits for the default service account pods need.
func (f *Framework) NewNamespace(t testing.TB) string {
	t.Helper()
	ctx := t.Context()
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(name) > 40 {
		name = name[:40]
	}
	ns, err := f.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: strings.Trim(name, "-") + "-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a namespace: %v", err)
	}
	t.Cleanup(func() {
		_ = f.Kube.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{})
	})
	Eventually(t, time.Minute, "default service account in "+ns.Name, func(ctx context.Context) error {
		_, err := f.Kube.CoreV1().ServiceAccounts(ns.Name).Get(ctx, "default", metav1.GetOptions{})
		return err
	})
	return ns.Name
}

// PodOptions shape the pods of CreatePod.
type PodOptions struct {
	// Node binds the pod; empty picks the first kwok node.
	Node string
	// Interceptors are written to the pod's interceptor annotation, index 0 first.
	Interceptors []string
	Labels       map[string]string
	// Mutate changes the pod before it is created.
	Mutate func(*corev1.Pod)
}

// CreatePod creates a pod bound to a kwok node and waits until kwok runs it.
func (f *Framework) CreatePod(t testing.TB, ns, name string, opts PodOptions) *corev1.Pod {
	t.Helper()
	ctx := t.Context()
	if opts.Node == "" {
		opts.Node = f.NodeNames[0]
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: opts.Labels},
		Spec: corev1.PodSpec{
			NodeName:   opts.Node,
			Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}},
		},
	}
	if len(opts.Interceptors) > 0 {
		pod.Annotations = map[string]string{v1alpha1.PodInterceptorsAnnotation: strings.Join(opts.Interceptors, ",")}
	}
	if opts.Mutate != nil {
		opts.Mutate(pod)
	}
	pod, err := f.Kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating pod %s/%s: %v", ns, name, err)
	}
	Eventually(t, time.Minute, "pod "+name+" running", func(ctx context.Context) error {
		current, err := f.Kube.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if current.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("phase %s", current.Status.Phase)
		}
		pod = current
		return nil
	})
	return pod
}

// NewEvictionRequest returns an EvictionRequest for pod, named after its UID,
// from the given requesters.
func NewEvictionRequest(pod *corev1.Pod, requesters ...string) *v1alpha1.EvictionRequest {
	er := &v1alpha1.EvictionRequest{
		ObjectMeta: metav1.ObjectMeta{Name: string(pod.UID), Namespace: pod.Namespace},
		Spec: v1alpha1.EvictionRequestSpec{
			Target: v1alpha1.EvictionTarget{PodRef: &v1alpha1.LocalPodReference{Name: pod.Name, UID: string(pod.UID)}},
		},
	}
	for _, name := range requesters {
		er.Spec.Requesters = append(er.Spec.Requesters, v1alpha1.Requester{Name: name})
	}
	return er
}

// CreateEvictionRequest creates an EvictionRequest for pod.
func (f *Framework) CreateEvictionRequest(t testing.TB, pod *corev1.Pod, requesters ...string) *v1alpha1.EvictionRequest {
	t.Helper()
	er, err := f.EvictionRequests(pod.Namespace).Create(t.Context(), NewEvictionRequest(pod, requesters...), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating the EvictionRequest of pod %s: %v", pod.Name, err)
	}
	return er
}

// KubectlResult is the outcome of a kubectl run.
type KubectlResult struct {
	Stdout, Stderr string
	Err            error
}

// Kubectl runs the kubectl binary of the cluster against kube-apiserver.
func (f *Framework) Kubectl(t testing.TB, args ...string) KubectlResult {
	t.Helper()
	return f.KubectlWithInput(t, "", args...)
}

// KubectlWithInput runs kubectl with stdin.
func (f *Framework) KubectlWithInput(t testing.TB, stdin string, args ...string) KubectlResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(*binDir, "kubectl"), append([]string{"--kubeconfig=" + f.KubeconfigPath}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(stdin), &stdout, &stderr
	err := cmd.Run()
	return KubectlResult{Stdout: stdout.String(), Stderr: stderr.String(), Err: err}
}

// MustKubectl runs kubectl and fails the test when it fails.
func (f *Framework) MustKubectl(t testing.TB, args ...string) string {
	t.Helper()
	r := f.Kubectl(t, args...)
	if r.Err != nil {
		t.Fatalf("kubectl %s: %v\n%s%s", strings.Join(args, " "), r.Err, r.Stdout, r.Stderr)
	}
	return r.Stdout
}

// ImpersonatingConfig is the admin configuration acting as user.
func (f *Framework) ImpersonatingConfig(user string, groups ...string) *rest.Config {
	config := rest.CopyConfig(f.AdminConfig)
	config.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
	return config
}

// NewNode creates a node of its own for the test, managed by kwok (Ready,
// running its pods), and deletes it when the test ends. Tests that drain or
// shut down a node use one so that they touch no other test's pods.
func (f *Framework) NewNode(t testing.TB) string {
	t.Helper()
	ctx := t.Context()
	capacity := corev1.ResourceList{
		corev1.ResourcePods:   resource.MustParse("110"),
		corev1.ResourceCPU:    resource.MustParse("32"),
		corev1.ResourceMemory: resource.MustParse("64Gi"),
	}
	node, err := f.Kube.CoreV1().Nodes().Create(ctx, &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-node-", Labels: map[string]string{localcluster.KwokNodeLabel: "fake"}},
		Status:     corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a node: %v", err)
	}
	t.Cleanup(func() { _ = f.Kube.CoreV1().Nodes().Delete(context.Background(), node.Name, metav1.DeleteOptions{}) })
	Eventually(t, time.Minute, "kwok to make node "+node.Name+" Ready", func(ctx context.Context) error {
		current, err := f.Kube.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range current.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("not Ready: %v", current.Status.Conditions)
	})
	return node.Name
}

// MarkForDrain sets or removes the annotation that asks the server's node
// drain to drain node, with the one that lets it evict pods that declare
// no controller, as the suite's pods are.
func (f *Framework) MarkForDrain(t testing.TB, node string, drain bool) {
	t.Helper()
	var value any
	if drain {
		value = "true"
	}
	// The suite's pods declare no controller: the drain may evict them.
	f.PatchNode(t, node, map[string]any{"metadata": map[string]any{"annotations": map[string]any{
		nodedrain.DrainAnnotation: value, nodedrain.ForceAnnotation: value}}})
}

// Command is a binary of the bin dir that a test runs, with its output
// captured and copied to a log file of the cluster's log directory.
type Command struct {
	Name   string
	cmd    *exec.Cmd
	stdout syncBuffer
	stderr syncBuffer
	done   chan struct{}
	err    error
}

// StartCommand starts bin of the bin dir with args and the cluster's admin
// kubeconfig; the test's cleanup kills it if it still runs.
func (f *Framework) StartCommand(t testing.TB, bin string, args ...string) *Command {
	t.Helper()
	logName := strings.NewReplacer("/", "-", " ", "-").Replace(t.Name()) + "-" + bin + ".log"
	log, err := os.OpenFile(filepath.Join(f.LogDir(), logName), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(log, "\n=== %s %s %s\n", time.Now().Format(time.RFC3339), bin, strings.Join(args, " "))
	c := &Command{Name: bin, cmd: exec.Command(filepath.Join(*binDir, bin), args...), done: make(chan struct{})}
	c.cmd.Env = append(os.Environ(), "KUBECONFIG="+f.KubeconfigPath)
	c.cmd.Stdout = io.MultiWriter(&c.stdout, log)
	c.cmd.Stderr = io.MultiWriter(&c.stderr, log)
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := c.cmd.Start(); err != nil {
		log.Close()
		t.Fatalf("starting %s: %v", bin, err)
	}
	go func() {
		c.err = c.cmd.Wait()
		log.Close()
		close(c.done)
	}()
	t.Cleanup(c.Kill)
	return c
}

// RunCommand runs bin to its end, at most timeout, and returns its output.
func (f *Framework) RunCommand(t testing.TB, timeout time.Duration, bin string, args ...string) KubectlResult {
	t.Helper()
	c := f.StartCommand(t, bin, args...)
	err := c.Wait(timeout)
	return KubectlResult{Stdout: c.Stdout(), Stderr: c.Stderr(), Err: err}
}

// Wait waits at most timeout for the command to exit and returns how it
// exited; on time-out it kills it.
func (c *Command) Wait(timeout time.Duration) error {
	select {
	case <-c.done:
		return c.err
	case <-time.After(timeout):
		c.Kill()
		return fmt.Errorf("%s did not exit within %s", c.Name, timeout)
	}
}

// Signal sends sig to the command.
func (c *Command) Signal(sig os.Signal) error {
	return c.cmd.Process.Signal(sig)
}

// Kill ends the command at once, as a crash would, and waits for it.
func (c *Command) Kill() {
	select {
	case <-c.done:
		return
	default:
	}
	_ = c.cmd.Process.Kill()
	<-c.done
}

// ExitCode is the command's exit code once it exited, -1 before.
func (c *Command) ExitCode() int {
	select {
	case <-c.done:
		return c.cmd.ProcessState.ExitCode()
	default:
		return -1
	}
}

// Stdout is what the command printed on stdout so far.
func (c *Command) Stdout() string { return c.stdout.String() }

// Stderr is what the command printed on stderr so far.
func (c *Command) Stderr() string { return c.stderr.String() }

// syncBuffer is a bytes.Buffer safe for a writer and concurrent readers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
