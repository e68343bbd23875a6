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
	"fmt"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	erutil "github.com/evictionrequest/apiserver/pkg/api/v1alpha1/evictionrequest"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/sdk/requester"
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
	if p.lifecycle != nil {
		err = p.requestLifecycle(ctx, pods)
	} else {
		err = p.requestCoordination(ctx, pods)
	}
	if err != nil || !p.Wait {
		return err
	}
	for _, pod := range pods {
		var result requester.Result
		if p.lifecycle != nil {
			result, err = p.lifecycle.Wait(ctx, pod)
		} else {
			result, err = p.requester.Wait(ctx, pod)
		}
		if err != nil {
			return fmt.Errorf("waiting for the eviction of pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		fmt.Fprintf(p.Out, "pod/%s: %s: %s\n", pod.Name, result.Reason, result.Message)
	}
	return nil
}

// requestCoordination requests the evictions on coordination.k8s.io.
func (p *PodsOptions) requestCoordination(ctx context.Context, pods []*corev1.Pod) error {
	for _, pod := range pods {
		er, err := p.requester.Request(ctx, pod)
		if err != nil {
			return fmt.Errorf("requesting the eviction of pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		switch {
		case erutil.IsComplete(er):
			fmt.Fprintf(p.Out, "pod/%s: the eviction is already complete (evictionrequest/%s)\n", pod.Name, er.Name)
		case !erutil.HasRequester(er, p.requester.Name()):
			fmt.Fprintf(p.Out, "pod/%s: eviction in progress and cannot be canceled (evictionrequest/%s, cancellation policy Forbid)\n", pod.Name, er.Name)
		default:
			fmt.Fprintf(p.Out, "pod/%s: eviction requested (evictionrequest/%s)\n", pod.Name, er.Name)
		}
	}
	return nil
}

// RunWithdraw withdraws the requester from the requests of the pods.
func (p *PodsOptions) RunWithdraw(ctx context.Context) error {
	perms := append([]permission{
		{verb: "get", resource: "pods", namespace: p.namespace, why: "to read the pods"},
		{verb: "get", group: p.group(), resource: "evictionrequests", namespace: p.namespace, why: "to read the EvictionRequests"},
	}, p.requesterPermissions(p.namespace, "to withdraw from the EvictionRequests")...)
	if err := p.checkAccess(ctx, perms); err != nil {
		return err
	}
	pods, err := p.readPods(ctx)
	if err != nil {
		return err
	}
	if p.lifecycle != nil {
		return p.withdrawLifecycle(ctx, pods)
	}
	// A request that may not be canceled fails the command before any
	// other is withdrawn.
	requests := make([]*v1alpha1.EvictionRequest, len(pods))
	for i, pod := range pods {
		callCtx, cancel := p.call(ctx)
		er, err := p.evr.CoordinationV1alpha1().EvictionRequests(pod.Namespace).Get(callCtx, string(pod.UID), metav1.GetOptions{})
		cancel()
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("reading the EvictionRequest of pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		if erutil.HasRequester(er, p.requester.Name()) && !erutil.IsComplete(er) && erutil.CancellationForbidden(er) {
			return fmt.Errorf("pod %s: interceptor %s set the cancellation policy of evictionrequest/%s to Forbid: it cannot be withdrawn now; nothing was changed",
				pod.Name, orNone(erutil.ActiveInterceptor(er)), er.Name)
		}
		requests[i] = er
	}
	for i, pod := range pods {
		er := requests[i]
		switch {
		case er == nil:
			fmt.Fprintf(p.Out, "pod/%s: no EvictionRequest\n", pod.Name)
			continue
		case !erutil.HasRequester(er, p.requester.Name()):
			fmt.Fprintf(p.Out, "pod/%s: %s is not a requester of evictionrequest/%s\n", pod.Name, p.requester.Name(), er.Name)
			continue
		case erutil.IsComplete(er):
			fmt.Fprintf(p.Out, "pod/%s: evictionrequest/%s is already complete\n", pod.Name, er.Name)
			continue
		}
		er, err := p.requester.Withdraw(ctx, pod.Namespace, pod.UID)
		if err != nil {
			return fmt.Errorf("withdrawing from the EvictionRequest of pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		left := "the request is canceled"
		if er != nil && len(er.Spec.Requesters) > 0 {
			left = fmt.Sprintf("%d other requesters remain", len(er.Spec.Requesters))
		}
		fmt.Fprintf(p.Out, "pod/%s: withdrew from evictionrequest/%s (%s)\n", pod.Name, string(pod.UID), left)
	}
	return nil
}
