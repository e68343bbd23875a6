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

package app

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/evictionrequest/apiserver/pkg/drain"
)

// refreshPeriod redraws the progress even when nothing changed, so that
// heartbeat ages stay current, and is how soon a due retry is noticed.
const refreshPeriod = time.Second

// DrainOptions are the flags of `kubectl evictionrequest drain`; the drain
// itself is a drain.Helper, as kubectl's drain command holds one, and the
// flags of what it evicts are bound to it.
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
	// AllowEmpty is kept for earlier releases: a node without pods drains.
	AllowEmpty bool
	// Selector selects the nodes to drain by label, in place of names.
	Selector string
	// PodSelector selects the pods to evict by label.
	PodSelector string
	// IgnoreDaemonSets is accepted as kubectl drain accepts it: DaemonSet
	// pods are always left.
	IgnoreDaemonSets bool
	// DryRun is none, client (print what would be requested) or server
	// (send the cordon and the requests as server-side dry runs).
	DryRun string
	// Output is "auto" (a live table on a terminal, lines otherwise),
	// "table" or "lines".
	Output string
	// ReportNodeConditions writes Kubernetes' node lifecycle conditions
	// DrainInProgress and Drained on the nodes as the drain goes.
	ReportNodeConditions bool
	// MaxConcurrentNodes limits the nodes drained at once: a number or a
	// percentage of the nodes; the zero value is all of them.
	MaxConcurrentNodes drain.NodeBudget
	deadlineFlags

	// notifyInterrupt returns a context that ends at Ctrl-C or SIGTERM;
	// tests interrupt the command through it.
	notifyInterrupt func(ctx context.Context) (context.Context, context.CancelFunc)

	// interruptReported is true once the interruption is on the nodes;
	// reported is what was last reported on each node: a reason.
	interruptReported bool
	reported          map[string]string
	drainer           *drain.Helper
	printer           progressPrinter
}

func newDrainCommand(o *Options) *cobra.Command {
	d := newDrainOptions(o)
	cmd := &cobra.Command{
		Use:   "drain NODE... | -l SELECTOR",
		Short: "Drain nodes through EvictionRequests and show the progress",
		Long: `Cordon the nodes and ask, through an EvictionRequest for each, for every pod on them to leave,
except mirror pods, DaemonSet pods and pods that already terminated (listed as skipped). As kubectl
drain does, it refuses, and changes nothing, when a node has pods that declare no controller
(--force evicts them) or use emptyDir volumes (--delete-emptydir-data evicts them). Each pod's
interceptors take part before it goes; the eviction request controller evicts it through the
Eviction API, honouring PodDisruptionBudgets, when no interceptor is left. Pods that land on the
nodes later get a request too. The command shows the progress until every pod is gone and every
request is complete, or --timeout passes: on a terminal as a live table, otherwise one line per
change. Ctrl-C withdraws the drain's requester from the requests that are not complete, unless
--withdraw-on-interrupt=false.`,
		Example: `  # Drain a node, waiting at most 10 minutes
  kubectl evictionrequest drain NODE --timeout=10m

  # Drain the nodes of a pool, also evicting pods without a controller and pods with emptyDir data
  kubectl evictionrequest drain -l pool=blue --force --delete-emptydir-data

  # Show what a drain would request, changing nothing
  kubectl evictionrequest drain NODE --dry-run=client

  # Ask for the evictions without cordoning, and keep the requests if interrupted
  kubectl evictionrequest drain NODE --cordon=false --withdraw-on-interrupt=false`,
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
	cmd.Flags().BoolVar(&d.AllowEmpty, "allow-empty", d.AllowEmpty, "Kept for earlier releases: a node without pods is drained (only cordoned).")
	_ = cmd.Flags().MarkDeprecated("allow-empty", "a node without pods is always drained")
	cmd.Flags().StringVarP(&d.Selector, "selector", "l", d.Selector, "Label selector of the nodes to drain, in place of node names, as in kubectl drain.")
	cmd.Flags().StringVar(&d.PodSelector, "pod-selector", d.PodSelector, "Label selector of the pods to evict; the others stay.")
	cmd.Flags().BoolVar(&d.drainer.Policy.Force, "force", d.drainer.Policy.Force, "Also evict pods that declare no controller (no ReplicaSet, Job, StatefulSet... recreates them), as kubectl drain --force does.")
	cmd.Flags().BoolVar(&d.drainer.Policy.DeleteEmptyDirData, "delete-emptydir-data", d.drainer.Policy.DeleteEmptyDirData, "Also evict pods with emptyDir volumes, whose data is lost, as kubectl drain --delete-emptydir-data does.")
	cmd.Flags().BoolVar(&d.IgnoreDaemonSets, "ignore-daemonsets", d.IgnoreDaemonSets, "Accepted as kubectl drain accepts it: DaemonSet-managed pods are always left on the node and listed.")
	cmd.Flags().StringVar(&d.DryRun, "dry-run", d.DryRun, `"none", "client" (print what would be requested, change nothing) or "server" (send the cordon and each request as a server-side dry run).`)
	cmd.Flags().Lookup("dry-run").NoOptDefVal = "client"
	cmd.Flags().DurationVar(&d.drainer.SkipWaitForDeleteTimeout, "skip-wait-for-delete-timeout", 0, "Stop waiting for a pod whose deletion started longer ago than this (for example 60s); 0 waits for every pod.")
	d.addDeadlineFlags(cmd.Flags())
	cmd.Flags().Var(&d.MaxConcurrentNodes, "max-concurrent-nodes",
		"Drain at most this many of the nodes at once (a number, or a percentage of the nodes such as 25%, rounded up), in name order: the next starts when one is drained. "+
			"Every node is cordoned first, so that the pods of one wave do not land on the next. Empty drains them all at once.")
	cmd.Flags().BoolVar(&d.ReportNodeConditions, "report-node-conditions", d.ReportNodeConditions,
		"Write the node lifecycle conditions DrainInProgress and Drained (Kubernetes 1.37) on the nodes: at the start, and when the drain completes, fails or is interrupted (reasons "+
			ReasonDrainStarted+", "+ReasonDrainCompleted+", "+ReasonDrainFailed+", "+ReasonDrainInterrupted+"). Needs patch on nodes/status.")
	cmd.Flags().StringVarP(&d.Output, "output", "o", d.Output, "Progress output: auto (a live table on a terminal, one line per change otherwise), table or lines.")
	return cmd
}

// newDrainOptions are the defaults of the drain command: cordon, withdraw
// on an interrupt, progress as the terminal allows.
func newDrainOptions(o *Options) *DrainOptions {
	return &DrainOptions{Options: o, Cordon: true, WithdrawOnInterrupt: true, Output: "auto", DryRun: "none", drainer: &drain.Helper{},
		notifyInterrupt: func(ctx context.Context) (context.Context, context.CancelFunc) {
			return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		}}
}

// Complete builds the clients, the printer and the drain's hooks, and reads
// the selectors, as kubectl's commands fill in what their flags mean.
func (d *DrainOptions) Complete() error {
	if err := d.complete(); err != nil {
		return err
	}
	selector, err := labels.Parse(d.PodSelector)
	if err != nil {
		return fmt.Errorf("--pod-selector: %w", err)
	}
	if _, err := labels.Parse(d.Selector); err != nil {
		return fmt.Errorf("--selector: %w", err)
	}
	d.drainer.PodSelector = selector
	d.printer = newPrinter(d.Output, d.Out)
	d.drainer.OnRequested = d.requested
	d.drainer.OnEscalated = d.escalated
	d.drainer.Escalator = drain.ClientEscalator{Pods: d.kube.CoreV1(), CallTimeout: d.Client.CallTimeout}
	d.drainer.LivePods, d.drainer.CallTimeout = d.kube.CoreV1(), d.Client.CallTimeout
	return nil
}

// Validate checks the flags; it changes nothing.
func (d *DrainOptions) Validate() error {
	if d.Timeout < 0 {
		return fmt.Errorf("--timeout must not be negative")
	}
	if err := d.validateDeadline(d.Timeout); err != nil {
		return err
	}
	switch d.Output {
	case "auto", "table", "lines":
	default:
		return fmt.Errorf("--output must be auto, table or lines, got %q", d.Output)
	}
	switch {
	case len(d.Nodes) == 0 && d.Selector == "":
		return fmt.Errorf("give the nodes to drain, or --selector")
	case len(d.Nodes) > 0 && d.Selector != "":
		return fmt.Errorf("give node names or --selector, not both")
	}
	switch d.DryRun {
	case "none", "client", "server":
	default:
		return fmt.Errorf(`--dry-run must be "none", "client" or "server", got %q`, d.DryRun)
	}
	if d.drainer.SkipWaitForDeleteTimeout < 0 {
		return fmt.Errorf("--skip-wait-for-delete-timeout must not be negative")
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

// Run drains the nodes: it checks everything and has its caches synced
// before it changes anything, cordons, then follows the drain's session
// until every pod is done. An interrupt before the cordon exits having
// changed nothing; after it, the drain withdraws.
func (d *DrainOptions) Run(ctx context.Context) error {
	selections, err := d.prepare(ctx)
	if err != nil {
		return err
	}
	if d.DryRun != "none" {
		return d.dryRun(ctx, selections)
	}
	start := time.Now()
	sigCtx, stopSignals := d.notifyInterrupt(ctx)
	defer stopSignals()
	waitCtx, cancelWait := sigCtx, context.CancelFunc(func() {})
	if d.Timeout > 0 {
		waitCtx, cancelWait = context.WithTimeout(sigCtx, d.Timeout)
	}
	defer cancelWait()

	t, err := newTracker(d.Options, d.Nodes, d.canListPDBs(ctx))
	if err != nil {
		return err
	}
	trackerCtx, stopTracker := context.WithCancel(ctx)
	defer func() {
		stopTracker()
		t.stop()
	}()
	// Every field of the drain is set before its session starts.
	d.drainer.Pods, d.drainer.PDBs, d.drainer.Participant = t, t.pdbs, d.participant
	if err := t.start(trackerCtx, waitCtx); err != nil {
		return d.endedBeforeChanges(sigCtx, err)
	}
	if d.Cordon {
		if err := d.cordon(waitCtx); err != nil {
			return err
		}
	}
	// The nodes of later waves are reported queued until the session
	// starts them.
	wave := d.MaxConcurrentNodes.Of(len(d.Nodes))
	d.reportStarted(ctx, d.Nodes[:wave]...)
	d.reportQueued(ctx, wave, d.Nodes[wave:]...)
	for _, node := range d.Nodes {
		d.printSkipped(node, selections[node])
	}
	session := d.drainer.NewSession(d.Nodes...)
	d.setDeadline(session, start)
	run := &drainRun{d: d, session: session, stopSignals: stopSignals}
	if wave < len(d.Nodes) {
		session.SetMaxConcurrentNodes(wave)
		run.waves = true
		fmt.Fprintf(d.Out, "draining %d of %d nodes at once\n", wave, len(d.Nodes))
	}
	return d.reportEnded(ctx, sigCtx, run.follow(ctx, sigCtx, waitCtx, t.changed))
}

// endedBeforeChanges is the error of a drain interrupted or timed out
// while its caches synced, before it cordoned or requested anything.
func (d *DrainOptions) endedBeforeChanges(sigCtx context.Context, err error) error {
	if sigCtx.Err() != nil {
		return fmt.Errorf("interrupted while watching the drain's pods and EvictionRequests; nothing was changed")
	}
	return fmt.Errorf("%w; nothing was changed", err)
}
