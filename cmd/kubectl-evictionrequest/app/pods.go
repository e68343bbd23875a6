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

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
)

// PodsOptions are the options of the commands that act on named pods of
// one namespace: request and withdraw.
type PodsOptions struct {
	*Options
	Pods []string
	// Wait waits for the requests to complete (request only).
	Wait bool
}

func newRequestCommand(o *Options) *cobra.Command {
	p := &PodsOptions{Options: o}
	cmd := &cobra.Command{
		Use:   "request POD...",
		Short: "Request the eviction of pods",
		Long: `Ask, through an EvictionRequest named after each pod's UID, for the pods to leave their nodes. An
EvictionRequest that exists gains this requester; several requesters of one pod never drop each
other. Every pod must exist, and you must be allowed to delete it, or nothing is changed.`,
		Example: `  # Request the eviction of two pods of namespace shop and wait until they are gone
  kubectl evictionrequest request -n shop web-0 web-1 --wait`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p.Pods = args
			if err := p.complete(); err != nil {
				return err
			}
			return p.RunRequest(cmd.Context())
		},
	}
	cmd.Flags().BoolVar(&p.Wait, "wait", false, "Wait until every request is complete and print how each ended.")
	return cmd
}

func newWithdrawCommand(o *Options) *cobra.Command {
	p := &PodsOptions{Options: o}
	cmd := &cobra.Command{
		Use:   "withdraw POD...",
		Short: "Withdraw this requester from the eviction of pods",
		Long: `Remove this requester, and only it, from the EvictionRequests of the pods. A request that no
requester wants any more is canceled, unless its interceptor set the cancellation policy to
Forbid: then nothing is changed and the command fails, naming the interceptor.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p.Pods = args
			if err := p.complete(); err != nil {
				return err
			}
			return p.RunWithdraw(cmd.Context())
		},
	}
	return cmd
}

// readPods reads every named pod, failing before any change when one is
// missing.
func (p *PodsOptions) readPods(ctx context.Context) ([]*corev1.Pod, error) {
	pods := make([]*corev1.Pod, 0, len(p.Pods))
	for _, name := range p.Pods {
		callCtx, cancel := p.call(ctx)
		pod, err := p.kube.CoreV1().Pods(p.namespace).Get(callCtx, name, metav1.GetOptions{})
		cancel()
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("pod %q not found in namespace %s; nothing was changed", name, p.namespace)
		}
		if err != nil {
			return nil, fmt.Errorf("reading pod %s/%s: %w", p.namespace, name, err)
		}
		pods = append(pods, pod)
	}
	return pods, nil
}

// RunRequest requests the eviction of the pods.
func (p *PodsOptions) RunRequest(ctx context.Context) error {
	perms := append([]permission{{verb: "get", resource: "pods", namespace: p.namespace, why: "to read the pods"}},
		p.requesterPermissions(p.namespace, "to request the eviction of the pods")...)
	if err := p.checkAccess(ctx, perms); err != nil {
		return err
	}
	pods, err := p.readPods(ctx)
	if err != nil {
		return err
	}
	for _, pod := range pods {
		status, err := p.participant.Request(ctx, pod, nil)
		if err != nil {
			return fmt.Errorf("requesting the eviction of pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		switch {
		case status.Complete && !status.Canceled:
			fmt.Fprintf(p.Out, "pod/%s: the eviction is already complete (evictionrequest/%s)\n", pod.Name, status.Request)
		case !status.Requested:
			fmt.Fprintf(p.Out, "pod/%s: eviction in progress and cannot be canceled (evictionrequest/%s, cancellation policy Forbid)\n", pod.Name, status.Request)
		default:
			fmt.Fprintf(p.Out, "pod/%s: eviction requested (evictionrequest/%s)\n", pod.Name, status.Request)
		}
	}
	if !p.Wait {
		return nil
	}
	for _, pod := range pods {
		result, err := p.participant.Wait(ctx, pod)
		if err != nil {
			return fmt.Errorf("waiting for the eviction of pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		fmt.Fprintf(p.Out, "pod/%s: %s: %s\n", pod.Name, result.Reason, result.Message)
	}
	return nil
}

// RunWithdraw withdraws the requester from the requests of the pods. A
// request whose interceptor forbids canceling it fails the command before
// any other is withdrawn.
func (p *PodsOptions) RunWithdraw(ctx context.Context) error {
	perms := append([]permission{{verb: "get", resource: "pods", namespace: p.namespace, why: "to read the pods"}},
		p.requesterPermissions(p.namespace, "to withdraw from the EvictionRequests")...)
	for _, resource := range p.api().Resources() {
		perms = append(perms, permission{verb: "list", group: p.api().Group(), resource: resource, namespace: p.namespace, why: "to read the evictions"})
	}
	if err := p.checkAccess(ctx, perms); err != nil {
		return err
	}
	pods, err := p.readPods(ctx)
	if err != nil {
		return err
	}
	statuses := make([]participant.Status, len(pods))
	for i, pod := range pods {
		status, err := p.participant.Status(ctx, pod.Namespace, pod.UID)
		if err != nil {
			return fmt.Errorf("reading the eviction of pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		if status.Requested && !status.Complete && status.Locked {
			return fmt.Errorf("pod %s: interceptor %s set the cancellation policy of evictionrequest/%s to Forbid: it cannot be withdrawn now; nothing was changed",
				pod.Name, orNone(status.ActiveInterceptor), status.Request)
		}
		statuses[i] = status
	}
	for i, pod := range pods {
		if err := p.withdraw(ctx, pod, statuses[i]); err != nil {
			return err
		}
	}
	return nil
}

// withdraw withdraws the requester from the eviction of pod, which stands
// at status, and says what it did.
func (p *PodsOptions) withdraw(ctx context.Context, pod *corev1.Pod, status participant.Status) error {
	switch {
	case !status.Exists:
		fmt.Fprintf(p.Out, "pod/%s: no EvictionRequest of %s\n", pod.Name, p.requesterName())
		return nil
	case !status.Requested:
		fmt.Fprintf(p.Out, "pod/%s: %s is not a requester of evictionrequest/%s (never was, or withdrew already)\n", pod.Name, p.requesterName(), status.Request)
		return nil
	case status.Complete:
		fmt.Fprintf(p.Out, "pod/%s: evictionrequest/%s is already complete\n", pod.Name, status.Request)
		return nil
	}
	w, err := p.participant.Withdraw(ctx, pod.Namespace, pod.UID)
	if err != nil {
		return fmt.Errorf("withdrawing from the eviction of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	if w != participant.Withdrawn {
		fmt.Fprintf(p.Out, "pod/%s: evictionrequest/%s is already finished\n", pod.Name, status.Request)
		return nil
	}
	left := "the request is canceled"
	if status.OtherRequesters > 0 {
		left = fmt.Sprintf("%d other requesters remain", status.OtherRequesters)
	}
	fmt.Fprintf(p.Out, "pod/%s: withdrew from evictionrequest/%s (%s)\n", pod.Name, status.Request, left)
	return nil
}
