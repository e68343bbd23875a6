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

package drain

import (
	"context"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"

	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
)

// WithdrawReport says what Withdraw did.
type WithdrawReport struct {
	// Withdrawn counts the requests the drain's requester left; Forbidden
	// those whose interceptor forbids canceling the eviction now.
	Withdrawn, Forbidden int
	// Errors are the withdrawals that failed, by pod.
	Errors []error
	// ForbiddenErrors say, for each forbidden withdrawal, who forbids it.
	ForbiddenErrors []error
}

// Withdraw withdraws the drain's requester from the requests of the pods the
// session evicts, and of the pods on its nodes, that are not complete, and
// removes the deadline it announced on them, unless another drain has
// announced its own since: an interceptor must not read a deadline nobody
// holds. A pod the session asked for whose request the cache does not show
// may still have one: Participant.Withdraw finds out.
func (s *Session) Withdraw(ctx context.Context) WithdrawReport {
	type target struct {
		ref types.NamespacedName
		uid types.UID
		// announced is true when the request shows the deadline this
		// session announced.
		announced bool
	}
	candidates := map[types.UID]target{}
	for _, node := range s.nodes {
		for _, pod := range s.h.Pods.OnNode(node) {
			candidates[pod.UID] = target{ref: types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}, uid: pod.UID}
		}
	}
	s.mu.Lock()
	for uid, t := range s.tracked {
		candidates[uid] = target{ref: t.ref, uid: uid}
	}
	var targets []target
	for uid, t := range candidates {
		status := s.h.status(ctx, t.ref.Namespace, uid)
		_, tracked := s.tracked[uid]
		shown, ok := RequestDeadline(status.Annotations)
		t.announced = ok && s.deadlineOnRequest[uid] == shown.key()
		if status.Complete || (status.Exists && !status.Requested && !t.announced) || (!status.Exists && !tracked) {
			continue
		}
		targets = append(targets, t)
	}
	s.mu.Unlock()

	var mu sync.Mutex
	var report WithdrawReport
	workqueue.ParallelizeUntil(ctx, s.h.parallelism(), len(targets), func(i int) {
		t := targets[i]
		w, err := s.h.Participant.Withdraw(ctx, t.ref.Namespace, t.uid)
		// Also when an earlier Withdraw left the request but failed to
		// remove the deadline.
		if err == nil && t.announced {
			if err = s.h.Participant.Annotate(ctx, t.ref.Namespace, t.uid, withdrawnAnnotations()); apierrors.IsNotFound(err) {
				err = nil
			}
			if err != nil {
				err = fmt.Errorf("removing the deadline announced on its request: %w", err)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		switch {
		case w == participant.WithdrawalForbidden:
			report.Forbidden++
			report.ForbiddenErrors = append(report.ForbiddenErrors, fmt.Errorf("pod %s: %w", t.ref, err))
		case err != nil:
			report.Errors = append(report.Errors, fmt.Errorf("pod %s: %w", t.ref, err))
		case w == participant.Withdrawn:
			report.Withdrawn++
		}
	})
	return report
}
