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
	"crypto/tls"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/workqueue"

	"github.com/evictionrequest/apiserver/artifacts"
)

//go:embed kwok-stages.yaml
var kwokStages []byte

// auditPolicy records every pod eviction kube-apiserver receives, so that
// tests can count the evictions our controller made.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  verbs: ["create"]
  resources:
  - group: ""
    resources: ["pods/eviction"]
- level: None
`

// KwokNodeLabel, set to "fake", marks the nodes kwok manages; removing it
// hands a node back to nobody, as if its kubelet died.
const KwokNodeLabel = "kwok.x-k8s.io/node"

// ReadyAfterAnnotation delays the readiness of a pod on the kwok nodes by
// its value, a duration ("3s"), as an application that loads before it
// serves: without it a pod is ready the moment it runs.
const ReadyAfterAnnotation = "kwok.evictionrequest.github.io/ready-after"

// controllers of kube-controller-manager the product relies on: PDB status
// (disruption), cross-server garbage collection, default service accounts
// for pods, namespace deletion, and the node lifecycle, taint eviction and
// pod GC that handle unreachable and out-of-service nodes (taint eviction
// finds pods through an index the node lifecycle controller installs).
var controllers = []string{"disruption", "garbagecollector", "serviceaccount", "namespace", "nodelifecycle", "taint-eviction-controller", "podgc",
	// Deployments and their ReplicaSets, which the surge interceptor scales.
	"deployment", "replicaset",
	// The default roles (admin, edit, view) gain the rules of the roles
	// aggregated into them, such as the overlays' evictionrequest-edit.
	"clusterrole-aggregation",
	// The usage of ResourceQuotas, our API's requests among it.
	"resourcequota",
	// The kube-root-ca.crt ConfigMap of every namespace, which the service
	// account volume of the pods on the real kubelet nodes projects.
	"root-ca-cert-publisher"}

// waitFor polls check until it succeeds, the process p exits, or
// startTimeout passes.
func waitFor(ctx context.Context, p *Process, what string, check func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	for {
		err := check(ctx)
		if err == nil {
			p.markReady()
			return nil
		}
		select {
		case <-p.Done():
			return errExited(p)
		case <-ctx.Done():
			return fmt.Errorf("%s: not ready after %s: %w", what, startTimeout, err)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// startAttempts bounds how often a component that dies while it starts is
// started: a race in a component's start (kwok v0.8.0 once crashed with
// "concurrent map writes" while setting up its CEL environment) must not
// fail a whole run, and a component that cannot start at all must.
const startAttempts = 3

// waitUntilReady waits as waitFor does, and starts p again, as a
// supervisor would, when it dies before it is ready: at most startAttempts
// starts in all, each crash logged with the tail of its log.
func (c *Cluster) waitUntilReady(ctx context.Context, p *Process, what string, check func(context.Context) error) error {
	for attempt := 1; ; attempt++ {
		err := waitFor(ctx, p, what, check)
		if !errors.Is(err, errExitedBeforeReady) || attempt == startAttempts || ctx.Err() != nil {
			return err
		}
		c.cfg.Logf("%s exited while starting (start %d of %d), starting it again; the end of %s:\n%s",
			p.Name, attempt, startAttempts, p.LogFile, p.logTail(logTailLines))
		if err := p.start(); err != nil {
			return err
		}
	}
}

// logTailLines is how much of a log a failed start shows.
const logTailLines = 20

func (c *Cluster) startKubeAPIServer(ctx context.Context) error {
	ports, err := c.reservePorts(1)
	if err != nil {
		return err
	}
	c.apiPort = ports[0]
	auditPolicyFile := c.path("audit-policy.yaml")
	if err := os.WriteFile(auditPolicyFile, []byte(auditPolicy), 0o644); err != nil {
		return err
	}
	admissionConfigFile, err := c.writeAdmissionConfiguration()
	if err != nil {
		return err
	}
	c.AuditLogPath = c.path("logs", "kube-apiserver-audit.log")
	args := []string{
		"--etcd-servers=" + c.etcd.ClientURL,
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", c.apiPort),
		"--advertise-address=127.0.0.1",
		// The endpoint reconciler refuses loopback advertise addresses.
		"--endpoint-reconciler-type=none",
		"--cert-dir=" + c.path("kube-apiserver"),
		"--tls-cert-file=" + c.pki.apiserverServing.CertFile,
		"--tls-private-key-file=" + c.pki.apiserverServing.KeyFile,
		"--client-ca-file=" + c.pki.clusterCA.certFile,
		"--anonymous-auth=false",
		// The Node authorizer and NodeRestriction, as every cluster has
		// them: the real kubelet nodes use their node credentials.
		"--authorization-mode=Node,RBAC",
		"--enable-admission-plugins=NodeRestriction",
		"--admission-control-config-file=" + admissionConfigFile,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + c.pki.serviceAccountKeyFile,
		"--service-account-signing-key-file=" + c.pki.serviceAccountKeyFile,
		"--service-cluster-ip-range=10.96.0.0/16",
		// The aggregation layer: the front proxy certificate the aggregator
		// presents to our server, and the headers that carry the user.
		"--requestheader-client-ca-file=" + c.pki.frontProxyCA.certFile,
		"--requestheader-allowed-names=" + frontProxyClientName,
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--requestheader-uid-headers=X-Remote-Uid",
		"--proxy-client-cert-file=" + c.pki.frontProxyClient.CertFile,
		"--proxy-client-key-file=" + c.pki.frontProxyClient.KeyFile,
		"--enable-aggregator-routing=false",
		"--audit-policy-file=" + auditPolicyFile,
		"--audit-log-path=" + c.AuditLogPath,
		"--audit-log-maxbackup=1",
	}
	if c.cfg.Lifecycle || c.cfg.LifecycleController {
		// GenericWorkload lets a pod name its scheduling group, which the
		// lifecycle controller refuses to evict alone.
		args = append(args, "--feature-gates=EvictionRequestAPI=true,GenericWorkload=true", "--runtime-config=lifecycle.k8s.io/v1alpha1=true")
	}
	p, err := c.run("kube-apiserver", nil, "kube-apiserver", args...)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.kubeAPIServer = p
	c.mu.Unlock()
	apiURL := loopbackURL("https", c.apiPort)
	if c.KubeconfigPath, err = c.writeKubeconfig("admin", apiURL, c.pki.admin); err != nil {
		return err
	}
	if c.AdminConfig, err = loadKubeconfig(c.KubeconfigPath); err != nil {
		return err
	}
	if c.Client, err = kubernetes.NewForConfig(c.AdminConfig); err != nil {
		return err
	}
	if c.Dynamic, err = dynamic.NewForConfig(c.AdminConfig); err != nil {
		return err
	}
	return c.waitKubeAPIServerReady(ctx, p)
}

func (c *Cluster) waitKubeAPIServerReady(ctx context.Context, p *Process) error {
	return c.waitUntilReady(ctx, p, "kube-apiserver", func(ctx context.Context) error {
		body, err := c.Client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err != nil {
			return fmt.Errorf("%w: %s", err, body)
		}
		return nil
	})
}

// RestartKubeAPIServer ends kube-apiserver with sig, SIGKILL as a crash
// would or SIGTERM as a rollout does (killed after the grace period if it
// does not exit), starts it again with the same flags, port and audit log,
// and waits until it is ready and serves our API again (the aggregator
// finds the APIService Available anew). The other components reconnect on
// their own, as they do in a cluster.
func (c *Cluster) RestartKubeAPIServer(ctx context.Context, sig syscall.Signal) error {
	c.mu.Lock()
	old := c.kubeAPIServer
	c.mu.Unlock()
	switch sig {
	case syscall.SIGKILL:
		old.Kill()
	case syscall.SIGTERM:
		old.Stop()
	default:
		return fmt.Errorf("restarting kube-apiserver on %v: only SIGKILL and SIGTERM", sig)
	}
	c.untrack(old)
	p, err := c.run(old.Name, old.env, "kube-apiserver", old.args...)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.kubeAPIServer = p
	c.mu.Unlock()
	if err := c.waitKubeAPIServerReady(ctx, p); err != nil {
		return err
	}
	if len(c.servers) == 0 {
		return nil
	}
	return c.waitAggregated(ctx, p)
}

// writeAdmissionConfiguration writes kube-apiserver's admission
// configuration as docs/eviction-bridge.md has admins write it: the
// ValidatingAdmissionWebhook plugin presents the bridge's client
// certificate, which the eviction-bridge-authentication component requires.
// The webhooks' local Services are on ports not known yet, so the
// kubeconfig names every webhook ("*"): the cluster has only ours.
func (c *Cluster) writeAdmissionConfiguration() (string, error) {
	kubeconfig := c.path("eviction-bridge-kubeconfig.yaml")
	data := artifacts.BridgeClientKubeconfig("", c.pki.bridgeClient.CertFile, c.pki.bridgeClient.KeyFile)
	if err := os.WriteFile(kubeconfig, []byte(data), 0o600); err != nil {
		return "", err
	}
	config := c.path("admission-configuration.yaml")
	return config, os.WriteFile(config, []byte(artifacts.AdmissionConfiguration(kubeconfig)), 0o600)
}

func (c *Cluster) startControllerManager(ctx context.Context) error {
	kubeconfig, err := c.writeKubeconfig("kube-controller-manager", loopbackURL("https", c.apiPort), c.pki.controllerManager)
	if err != nil {
		return err
	}
	ports, err := c.reservePorts(1)
	if err != nil {
		return err
	}
	p, err := c.run("kube-controller-manager", nil, "kube-controller-manager", append([]string{
		"--kubeconfig=" + kubeconfig,
		"--controllers=" + strings.Join(controllers, ","),
		"--leader-elect=false",
		"--use-service-account-credentials=false",
		// kube-controller-manager discovers our API within 30 s of its
		// start and counts it in a quota at the quota's next full sync,
		// every 5 minutes by default: a test's quota must not wait that long.
		"--resource-quota-sync-period=15s",
		// Its /metrics, for the benchmarks that compare our processes
		// with it; the serving certificate is self-signed.
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", ports[0]),
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
	}, c.cfg.ControllerManagerArgs...)...)
	if err != nil {
		return err
	}
	p.MetricsURL = loopbackURL("https", ports[0]) + "/metrics"
	// Pods need the default service account its controller creates.
	return c.waitUntilReady(ctx, p, "kube-controller-manager", func(ctx context.Context) error {
		_, err := c.Client.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{})
		return err
	})
}

// startScheduler starts kube-scheduler as the system:kube-scheduler user,
// which kube-apiserver's bootstrap RBAC authorizes.
func (c *Cluster) startScheduler(ctx context.Context) error {
	kubeconfig, err := c.writeKubeconfig("kube-scheduler", loopbackURL("https", c.apiPort), c.pki.scheduler)
	if err != nil {
		return err
	}
	ports, err := c.reservePorts(1)
	if err != nil {
		return err
	}
	p, err := c.run("kube-scheduler", nil, "kube-scheduler",
		"--kubeconfig="+kubeconfig,
		"--authentication-kubeconfig="+kubeconfig,
		"--authorization-kubeconfig="+kubeconfig,
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", ports[0]),
	)
	if err != nil {
		return err
	}
	// Its serving certificate is self-signed; only its health is read here.
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	return c.waitUntilReady(ctx, p, "kube-scheduler", func(ctx context.Context) error {
		return httpGetOK(ctx, client, loopbackURL("https", ports[0])+"/readyz", "ok")
	})
}

// KwokNodeLeaseSeconds is the duration of the kwok nodes' Leases: the
// kubelet's default (nodeLeaseDurationSeconds).
const KwokNodeLeaseSeconds = 40

func (c *Cluster) startKwok(ctx context.Context) error {
	kubeconfig, err := c.writeKubeconfig("kwok", loopbackURL("https", c.apiPort), c.pki.kwok)
	if err != nil {
		return err
	}
	stagesFile := c.path("kwok-stages.yaml")
	if err := os.WriteFile(stagesFile, kwokStages, 0o644); err != nil {
		return err
	}
	workDir := c.path("kwok")
	if err := os.MkdirAll(workDir, 0o755); err != nil {
		return err
	}
	ports, err := c.reservePorts(1)
	if err != nil {
		return err
	}
	p, err := c.run("kwok",
		// kwok reads $KWOK_WORKDIR/kwok.yaml if it exists; an empty work
		// directory keeps a user's own kwok configuration out.
		[]string{"KWOK_WORKDIR=" + workDir},
		"kwok",
		"--kubeconfig="+kubeconfig,
		"--config="+stagesFile,
		"--manage-nodes-with-label-selector="+KwokNodeLabel+"=fake",
		// Each node's Lease in kube-node-lease, renewed every quarter of
		// its duration, as a kubelet's: kube-controller-manager reads a
		// node's health from it. kwok's flag defaults to none, and then
		// only the node-heartbeat stage keeps a node Ready, whose delay
		// starts again at each change of the Node: a node Karpenter
		// changed three times went 50 s without a heartbeat and was
		// marked unreachable.
		fmt.Sprintf("--node-lease-duration-seconds=%d", KwokNodeLeaseSeconds),
		fmt.Sprintf("--server-address=127.0.0.1:%d", ports[0]),
		"--cidr=10.244.0.0/16",
	)
	if err != nil {
		return err
	}
	c.kwok = p
	_, err = c.AddKwokNodes(ctx, c.cfg.Nodes)
	return err
}

// AddKwokNodes creates n more kwok nodes, numbered after those of the
// cluster (NodeNames), and returns their names once kwok reports them all
// Ready. It appends to NodeNames, which nothing else may read meanwhile.
func (c *Cluster) AddKwokNodes(ctx context.Context, n int) ([]string, error) {
	first := len(c.NodeNames)
	if first+n > maxKwokNodes {
		return nil, fmt.Errorf("%d kwok nodes asked for, at most %d fit the pod CIDRs", first+n, maxKwokNodes)
	}
	names := make([]string, n)
	var createErr error
	var once sync.Once
	workqueue.ParallelizeUntil(ctx, 16, n, func(i int) {
		callCtx, cancel := context.WithTimeout(ctx, callTimeout)
		defer cancel()
		node, err := c.Client.CoreV1().Nodes().Create(callCtx, kwokNode(first+i), metav1.CreateOptions{})
		if err != nil {
			once.Do(func() { createErr = err })
			return
		}
		names[i] = node.Name
	})
	if createErr != nil {
		return nil, createErr
	}
	c.NodeNames = append(c.NodeNames, names...)
	added := sets.New(names...)
	err := c.waitUntilReady(ctx, c.kwok, "kwok nodes", func(ctx context.Context) error {
		list, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: KwokNodeLabel + "=fake", ResourceVersion: "0"})
		if err != nil {
			return err
		}
		ready := 0
		for i := range list.Items {
			if added.Has(list.Items[i].Name) && nodeReady(&list.Items[i]) {
				ready++
			}
		}
		if ready < n {
			return fmt.Errorf("%d of %d nodes are Ready", ready, n)
		}
		return nil
	})
	return names, err
}

// maxKwokNodes is how many kwok nodes have pod CIDRs: 10.244.0.0/24 to
// 10.255.255.0/24.
const maxKwokNodes = 12 * 256

// kwokNode is the i-th fake node: kwok manages it through its label, and its
// status already carries the capacity and address a kubelet would report.
// Its pod CIDR (10.244.0.0/24 onwards) is valid up to maxKwokNodes.
func kwokNode(i int) *corev1.Node {
	name := fmt.Sprintf("kwok-node-%d", i)
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("32"),
		corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	cidr := fmt.Sprintf("10.%d.%d.0/24", 244+i/256, i%256)
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:   name,
			Labels: map[string]string{KwokNodeLabel: "fake", corev1.LabelHostname: name, corev1.LabelOSStable: "linux"},
		},
		Spec: corev1.NodeSpec{PodCIDR: cidr, PodCIDRs: []string{cidr}},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: capacity,
			Addresses:   []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("10.10.%d.%d", i/250, i%250+1)}},
		},
	}
}

func nodeReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// httpGetOK fails unless url answers 200 with a body containing want.
func httpGetOK(ctx context.Context, client *http.Client, url, want string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
		return fmt.Errorf("GET %s: %d %s", url, resp.StatusCode, body)
	}
	return nil
}
