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

package plugin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/drain"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
)

const (
	// requestParallelism bounds the EvictionRequests written at once; the
	// client's QPS limit paces them.
	requestParallelism = 16
	// rerequestAfter is how long a pod whose request failed waits before
	// it is asked for again.
	rerequestAfter = 5 * time.Second
	// refreshPeriod redraws the table even when nothing changed, so that
	// heartbeat ages stay current.
	refreshPeriod = time.Second
)

// DrainOptions are the options of `kubectl evictionrequest drain`.
type DrainOptions struct {
	*Options
	Nodes []string
	// Cordon marks the nodes unschedulable first, as kubectl drain does.
	Cordon bool
	// Timeout bounds the wait for the pods to be gone; zero waits forever.
	Timeout time.Duration
	// WithdrawOnInterrupt withdraws the drain's requester from the
	// requests that are not complete when the drain is interrupted.
	WithdrawOnInterrupt bool
	// AllowEmpty drains nodes that have no pods instead of failing.
	AllowEmpty bool
	// PodSelector selects the pods to evict by label.
	PodSelector string
	// Output is "auto" (a live table on a terminal, lines otherwise),
	// "table" or "lines".
	Output string

	printer  progressPrinter
	selector labels.Selector
	// stopSignals lets a second Ctrl-C end the command while it withdraws.
	stopSignals func()
	// mu guards tracked and lastRequest, written by the requesting workers.
	mu          sync.Mutex
	tracked     map[types.UID]trackedPod
	lastRequest map[types.UID]time.Time
}

func newDrainCommand(o *Options) *cobra.Command {
	d := &DrainOptions{Options: o, Cordon: true, WithdrawOnInterrupt: true, Output: "auto"}
	cmd := &cobra.Command{
		Use:   "drain NODE...",
		Short: "Drain nodes through EvictionRequests and show the progress",
		Long: `Cordon the nodes and ask, through an EvictionRequest for each, for every pod on them to leave,
except mirror pods, DaemonSet pods and pods that already terminated (listed as skipped). Each pod's
interceptors take part before it goes; the eviction request controller evicts it through the
Eviction API, honouring PodDisruptionBudgets, when no interceptor is left. The command shows the
progress until every pod is gone and every request is complete, or --timeout passes: on a terminal
as a live table, otherwise one line per change. Ctrl-C withdraws the drain's requester from the
requests that are not complete, unless --withdraw-on-interrupt=false.`,
		Example: `  # Drain a node, waiting at most 10 minutes
  kubectl evictionrequest drain kwok-node-0 --timeout=10m

  # Ask for the evictions without cordoning, and keep the requests if interrupted
  kubectl evictionrequest drain kwok-node-0 --cordon=false --withdraw-on-interrupt=false`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			d.Nodes = args
			if err := d.Complete(); err != nil {
				return err
			}
			if err := d.Validate(); err != nil {
				return err
			}
			return d.Run(cmd.Context())
		},
	}
	cmd.Flags().BoolVar(&d.Cordon, "cordon", d.Cordon, "Cordon the nodes before requesting the evictions, as kubectl drain does.")
	cmd.Flags().DurationVar(&d.Timeout, "timeout", d.Timeout, "How long to wait for the pods to be gone; 0 waits forever. On time-out the command exits non-zero and names what blocks each remaining pod.")
	cmd.Flags().BoolVar(&d.WithdrawOnInterrupt, "withdraw-on-interrupt", d.WithdrawOnInterrupt, "On Ctrl-C or SIGTERM, withdraw the drain's requester from the EvictionRequests that are not complete.")
	cmd.Flags().BoolVar(&d.AllowEmpty, "allow-empty", d.AllowEmpty, "Drain a node that has no pods (it is only cordoned) instead of failing.")
	cmd.Flags().StringVarP(&d.PodSelector, "pod-selector", "l", d.PodSelector, "Label selector of the pods to evict; the others stay.")
	cmd.Flags().StringVarP(&d.Output, "output", "o", d.Output, "Progress output: auto (a live table on a terminal, one line per change otherwise), table or lines.")
	return cmd
}

// Complete builds the clients and the printer.
func (d *DrainOptions) Complete() error {
	if err := d.complete(); err != nil {
		return err
	}
	switch d.Output {
	case "lines":
		d.printer = newLinePrinter(d.Out)
	case "table":
		d.printer = &tablePrinter{out: d.Out, maxRows: 20}
	default:
		d.printer = newLinePrinter(d.Out)
		if f, ok := d.Out.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			rows := 20
			if _, height, err := term.GetSize(int(f.Fd())); err == nil && height > 6 {
				rows = height - 4
			}
			d.printer = &tablePrinter{out: d.Out, maxRows: rows}
		}
	}
	d.tracked = map[types.UID]trackedPod{}
	d.lastRequest = map[types.UID]time.Time{}
	return nil
}

// Validate checks the flags.
func (d *DrainOptions) Validate() error {
	if d.Timeout < 0 {
		return fmt.Errorf("--timeout must not be negative")
	}
	switch d.Output {
	case "auto", "table", "lines":
	default:
		return fmt.Errorf("--output must be auto, table or lines, got %q", d.Output)
	}
	var err error
	if d.selector, err = labels.Parse(d.PodSelector); err != nil {
		return fmt.Errorf("--pod-selector: %w", err)
	}
	seen := map[string]bool{}
	for _, node := range d.Nodes {
		if seen[node] {
			return fmt.Errorf("node %s is given twice", node)
		}
		seen[node] = true
	}
	return nil
}

// Run drains the nodes.
func (d *DrainOptions) Run(ctx context.Context) error {
	selections, err := d.prepare(ctx)
	if err != nil {
		return err
	}
	sigCtx, stopSignals := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stopSignals()
	d.stopSignals = stopSignals
	waitCtx, cancelWait := sigCtx, context.CancelFunc(func() {})
	if d.Timeout > 0 {
		waitCtx, cancelWait = context.WithTimeout(sigCtx, d.Timeout)
	}
	defer cancelWait()

	if d.Cordon {
		if err := d.cordon(waitCtx); err != nil {
			return err
		}
	}
	for _, node := range d.Nodes {
		d.printSkipped(node, selections[node])
	}
	t, err := newTracker(d.Options, d.Nodes, d.canListPDBs(ctx))
	if err != nil {
		return err
	}
	trackerCtx, stopTracker := context.WithCancel(ctx)
	defer func() {
		stopTracker()
		t.stop()
	}()
	if err := t.start(trackerCtx, waitCtx); err != nil {
		return d.ended(ctx, sigCtx, t, err)
	}
	var pods []trackedPod
	for _, node := range d.Nodes {
		for _, pod := range selections[node].Evict {
			pods = append(pods, trackedPod{ref: types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}, uid: pod.UID, node: node})
		}
	}
	d.requestAll(waitCtx, pods, selections)
	if waitCtx.Err() != nil {
		return d.ended(ctx, sigCtx, t, waitCtx.Err())
	}
	fmt.Fprintf(d.Out, "requested the eviction of %s as %s\n", drain.Pods(len(pods)), d.requester.Name())
	if err := d.wait(waitCtx, t); err != nil {
		return d.ended(ctx, sigCtx, t, err)
	}
	for _, node := range d.Nodes {
		fmt.Fprintf(d.Out, "node/%s drained\n", node)
	}
	return nil
}

// prepare reads the nodes and their pods and checks the user's permissions,
// before anything changes: bad input changes nothing.
func (d *DrainOptions) prepare(ctx context.Context) (map[string]drain.Selection, error) {
	var perms []permission
	perms = append(perms,
		permission{verb: "get", resource: "nodes", why: "to read the nodes"},
		permission{verb: "list", resource: "pods", why: "to find the pods of the nodes"},
		permission{verb: "watch", resource: "pods", why: "to follow the pods of the nodes"},
		permission{verb: "list", group: v1alpha1.GroupName, resource: "evictionrequests", why: "to follow the evictions"},
		permission{verb: "watch", group: v1alpha1.GroupName, resource: "evictionrequests", why: "to follow the evictions"},
	)
	if d.Cordon {
		perms = append(perms, permission{verb: "patch", resource: "nodes", why: "to cordon the nodes"})
	}
	if err := d.checkAccess(ctx, perms); err != nil {
		return nil, err
	}
	selections := map[string]drain.Selection{}
	namespaces := map[string]bool{}
	for _, name := range d.Nodes {
		callCtx, cancel := d.call(ctx)
		_, err := d.kube.CoreV1().Nodes().Get(callCtx, name, metav1.GetOptions{})
		cancel()
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("node %q not found; nothing was changed", name)
		}
		if err != nil {
			return nil, fmt.Errorf("reading node %s: %w", name, err)
		}
		pods, err := d.listPods(ctx, name)
		if err != nil {
			return nil, err
		}
		if len(pods) == 0 && !d.AllowEmpty {
			return nil, fmt.Errorf("node %s has no pods%s: nothing to drain; nothing was changed (--allow-empty cordons it anyway)", name, d.selectorSuffix())
		}
		selection := drain.Select(pods)
		selections[name] = selection
		for _, pod := range selection.Evict {
			namespaces[pod.Namespace] = true
		}
	}
	perms = nil
	for _, ns := range sortedKeys(namespaces) {
		perms = append(perms, requesterPermissions(ns, "to request the eviction of the pods in "+ns)...)
	}
	if err := d.checkAccess(ctx, perms); err != nil {
		return nil, err
	}
	return selections, nil
}

func (d *DrainOptions) listPods(ctx context.Context, node string) ([]*corev1.Pod, error) {
	callCtx, cancel := d.call(ctx)
	defer cancel()
	list, err := d.kube.CoreV1().Pods(metav1.NamespaceAll).List(callCtx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node).String(),
		LabelSelector: d.PodSelector,
	})
	if err != nil {
		return nil, fmt.Errorf("listing the pods of node %s: %w", node, err)
	}
	pods := make([]*corev1.Pod, 0, len(list.Items))
	for i := range list.Items {
		if list.Items[i].Spec.NodeName == node {
			pods = append(pods, &list.Items[i])
		}
	}
	return pods, nil
}

func (d *DrainOptions) selectorSuffix() string {
	if d.PodSelector == "" {
		return ""
	}
	return " matching " + d.PodSelector
}

func (d *DrainOptions) cordon(ctx context.Context) error {
	for _, name := range d.Nodes {
		callCtx, cancel := d.call(ctx)
		node, err := d.kube.CoreV1().Nodes().Get(callCtx, name, metav1.GetOptions{})
		if err == nil {
			var cordoned bool
			cordoned, err = drain.Cordon(callCtx, d.kube.CoreV1(), node, "", metav1.PatchOptions{FieldManager: "kubectl-evictionrequest"})
			if err == nil && cordoned {
				fmt.Fprintf(d.Out, "node/%s cordoned\n", name)
			} else if err == nil {
				fmt.Fprintf(d.Out, "node/%s already cordoned\n", name)
			}
		}
		cancel()
		if err != nil {
			return fmt.Errorf("cordoning node %s: %w", name, err)
		}
	}
	return nil
}

// printSkipped lists the pods the drain leaves, as kubectl drain does.
func (d *DrainOptions) printSkipped(node string, selection drain.Selection) {
	for _, reason := range drain.SkipReasons {
		pods := selection.Skipped[reason]
		if len(pods) == 0 {
			continue
		}
		names := make([]string, 0, len(pods))
		for _, pod := range pods {
			names = append(names, pod.Namespace+"/"+pod.Name)
		}
		fmt.Fprintf(d.ErrOut, "Warning: node %s: skipping %s pods: %s\n", node, reason, strings.Join(names, ", "))
	}
}

// canListPDBs is true when the user may list and watch PodDisruptionBudgets,
// which name what blocks an eviction; a drain works without.
func (d *DrainOptions) canListPDBs(ctx context.Context) bool {
	return d.checkAccess(ctx, []permission{
		{verb: "list", group: "policy", resource: "poddisruptionbudgets", why: "to name the budget that blocks an eviction"},
		{verb: "watch", group: "policy", resource: "poddisruptionbudgets", why: "to name the budget that blocks an eviction"},
	}) == nil
}

// requestAll requests the eviction of pods, requestParallelism at a time,
// and tracks each.
func (d *DrainOptions) requestAll(ctx context.Context, pods []trackedPod, selections map[string]drain.Selection) {
	byUID := map[types.UID]*corev1.Pod{}
	for _, selection := range selections {
		for _, pod := range selection.Evict {
			byUID[pod.UID] = pod
		}
	}
	workqueue.ParallelizeUntil(ctx, requestParallelism, len(pods), func(i int) {
		d.request(ctx, pods[i], byUID[pods[i].uid])
	})
}

// request asks for the eviction of one pod and tracks it; a failure is
// reported and retried by the wait loop.
func (d *DrainOptions) request(ctx context.Context, p trackedPod, pod *corev1.Pod) {
	d.mu.Lock()
	d.tracked[p.uid] = p
	d.lastRequest[p.uid] = time.Now()
	d.mu.Unlock()
	if _, err := d.requester.Request(ctx, pod); err != nil && ctx.Err() == nil {
		d.printer.note(fmt.Sprintf("error: requesting the eviction of pod %s (retrying): %v", p.ref, err))
		d.mu.Lock()
		d.lastRequest[p.uid] = time.Now()
		d.mu.Unlock()
		return
	}
	d.mu.Lock()
	delete(d.lastRequest, p.uid)
	d.mu.Unlock()
}

// wait shows the progress until every tracked pod is settled; it requests
// the eviction of pods that land on the nodes meanwhile, and asks again for
// pods whose request failed.
func (d *DrainOptions) wait(ctx context.Context, t *tracker) error {
	ticker := time.NewTicker(refreshPeriod)
	defer ticker.Stop()
	for {
		d.adoptNewPods(ctx, t)
		progress := d.progress(t)
		d.retryFailedRequests(ctx, t, progress)
		summary := drain.Summarize(progress)
		d.printer.update(summary, progress, time.Now())
		if allSettled(progress) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.changed:
		case <-ticker.C:
		}
	}
}

// adoptNewPods requests the eviction of pods that landed on a node after
// the drain started.
func (d *DrainOptions) adoptNewPods(ctx context.Context, t *tracker) {
	for _, node := range d.Nodes {
		var fresh []*corev1.Pod
		d.mu.Lock()
		for _, pod := range t.podsOn(node) {
			if _, ok := d.tracked[pod.UID]; !ok && drain.Skip(pod) == "" && d.selects(pod) {
				fresh = append(fresh, pod)
			}
		}
		d.mu.Unlock()
		for _, pod := range fresh {
			d.printer.note(fmt.Sprintf("pod %s/%s landed on node %s: requesting its eviction", pod.Namespace, pod.Name, node))
			d.request(ctx, trackedPod{ref: types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}, uid: pod.UID, node: node}, pod)
		}
	}
}

func (d *DrainOptions) selects(pod *corev1.Pod) bool {
	return d.selector.Matches(labels.Set(pod.Labels))
}

// retryFailedRequests asks again for pods that still have no request a
// while after a failed attempt.
func (d *DrainOptions) retryFailedRequests(ctx context.Context, t *tracker, progress []drain.PodProgress) {
	for _, p := range progress {
		if p.HasRequest || p.State == drain.StateGone {
			continue
		}
		d.mu.Lock()
		last, failed := d.lastRequest[p.UID]
		tp := d.tracked[p.UID]
		d.mu.Unlock()
		if !failed || time.Since(last) < rerequestAfter {
			continue
		}
		pod, err := t.pods[tp.node].Pods(tp.ref.Namespace).Get(tp.ref.Name)
		if err == nil && pod.UID == tp.uid {
			d.request(ctx, tp, pod)
		}
	}
}

// progress is the progress of every tracked pod, sorted by namespace and name.
func (d *DrainOptions) progress(t *tracker) []drain.PodProgress {
	d.mu.Lock()
	pods := make([]trackedPod, 0, len(d.tracked))
	for _, p := range d.tracked {
		pods = append(pods, p)
	}
	d.mu.Unlock()
	progress := make([]drain.PodProgress, 0, len(pods))
	for _, p := range pods {
		progress = append(progress, t.progress(p))
	}
	sort.Slice(progress, func(i, j int) bool {
		if progress[i].Namespace != progress[j].Namespace {
			return progress[i].Namespace < progress[j].Namespace
		}
		return progress[i].Name < progress[j].Name
	})
	return progress
}

func allSettled(progress []drain.PodProgress) bool {
	for _, p := range progress {
		if !p.Settled() {
			return false
		}
	}
	return true
}

// ended turns how the drain stopped into the command's error: on an
// interrupt it withdraws the drain's requester first; on a time-out it names
// what blocks each remaining pod.
func (d *DrainOptions) ended(ctx, sigCtx context.Context, t *tracker, err error) error {
	if sigCtx.Err() != nil && ctx.Err() == nil {
		d.stopSignals()
		if !d.WithdrawOnInterrupt {
			return errors.New("interrupted; the EvictionRequests stay (--withdraw-on-interrupt=false)")
		}
		return fmt.Errorf("interrupted: %s", d.withdrawAll(ctx, t))
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	d.mu.Lock()
	started := len(d.tracked) > 0
	d.mu.Unlock()
	if !started {
		return fmt.Errorf("timed out after %s before the evictions were requested: %w", d.Timeout, err)
	}
	now := time.Now()
	var lines []string
	for _, p := range d.progress(t) {
		if !p.Settled() {
			lines = append(lines, fmt.Sprintf("  pod %s/%s: %s", p.Namespace, p.Name, describe(p, now)))
		}
	}
	return fmt.Errorf("timed out after %s waiting for %s:\n%s", d.Timeout, drain.Pods(len(lines)), strings.Join(lines, "\n"))
}

// withdrawAll withdraws the drain's requester from the requests of the
// tracked pods that are not complete, and says how that went.
func (d *DrainOptions) withdrawAll(ctx context.Context, t *tracker) string {
	withdrawn, forbidden := 0, 0
	var failures []string
	for _, p := range d.progress(t) {
		// A request the cache does not show yet may exist: Withdraw
		// finds out.
		if p.Settled() || p.RequestComplete {
			continue
		}
		er, err := d.requester.Withdraw(ctx, p.Namespace, p.UID)
		switch {
		case requester.IsCancellationForbidden(err):
			forbidden++
			fmt.Fprintf(d.ErrOut, "pod %s/%s: %v\n", p.Namespace, p.Name, err)
		case err != nil:
			failures = append(failures, fmt.Sprintf("pod %s/%s: %v", p.Namespace, p.Name, err))
		case er != nil:
			withdrawn++
		}
	}
	msg := fmt.Sprintf("withdrew %s from %d EvictionRequests that were not complete", d.requester.Name(), withdrawn)
	if forbidden > 0 {
		msg += fmt.Sprintf("; %d cannot be canceled (their interceptor set the cancellation policy to Forbid)", forbidden)
	}
	if len(failures) > 0 {
		msg += "; failed for " + strings.Join(failures, "; ")
	}
	return msg
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
