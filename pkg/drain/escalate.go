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
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/util/workqueue"

	policyutil "github.com/evictionrequest/apiserver/pkg/api/policy/v1"
)

// Escalator carries out a drain's escalation on one pod.
type Escalator interface {
	// Evict evicts pod through the Eviction API.
	Evict(ctx context.Context, pod *corev1.Pod) error
	// Delete deletes pod with its own grace period.
	Delete(ctx context.Context, pod *corev1.Pod) error
}

// ClientEscalator escalates through a client of the cluster, each call
// bounded by CallTimeout; both calls carry the pod's UID as a
// precondition, so that a pod recreated under the same name is left alone.
type ClientEscalator struct {
	Pods        corev1client.PodsGetter
	CallTimeout time.Duration
}

// EscalationReason is why an escalation's eviction skips the pod's
// participants, as it tells the eviction API bridge.
const EscalationReason = "the drain's deadline passed"

// Evict evicts pod through the Eviction API, asking the eviction API
// bridge to skip the participants still to come: the bridge lets the
// eviction through when the caller may delete the pod.
func (e ClientEscalator) Evict(ctx context.Context, pod *corev1.Pod) error {
	ctx, cancel := context.WithTimeout(ctx, e.CallTimeout)
	defer cancel()
	eviction := &policyv1.Eviction{
		ObjectMeta:    metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace},
		DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pod.UID}},
	}
	policyutil.SkipParticipants(eviction, EscalationReason)
	return ignoreNotFound(e.Pods.Pods(pod.Namespace).EvictV1(ctx, eviction))
}

// Delete deletes pod with its own grace period.
func (e ClientEscalator) Delete(ctx context.Context, pod *corev1.Pod) error {
	ctx, cancel := context.WithTimeout(ctx, e.CallTimeout)
	defer cancel()
	return ignoreNotFound(e.Pods.Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pod.UID}}))
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// escalation is the session's last escalation of one pod.
type escalation struct {
	at  time.Time
	err string
}

// SetDeadline gives the session a deadline from its next Sync on: its
// requests are annotated with it, and once it passes the pods left are
// escalated as d says (EscalateFail leaves that to the caller).
func (s *Session) SetDeadline(d Deadline) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deadline = d
}

// Deadline is the session's deadline.
func (s *Session) Deadline() Deadline {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.deadline
}

// applyDeadline announces the deadline on the requests that exist and, once
// it passed, escalates the pods left; it marks the progress of the pods it
// escalated, and returns the errors of the annotations that failed and how
// soon the session must look again for the deadline's sake.
func (s *Session) applyDeadline(ctx context.Context, report *Report, onNodes map[types.UID]*corev1.Pod) ([]error, time.Duration) {
	deadline, now := s.Deadline(), s.h.now()
	if !deadline.IsSet() {
		return nil, 0
	}
	report.Deadline = deadline
	errs := s.announceDeadline(ctx, deadline, report.Progress)
	if !deadline.Passed(now) {
		return errs, deadline.At.Sub(now)
	}
	if deadline.Fails() {
		return errs, 0
	}
	s.escalate(ctx, deadline.Escalation, report.Progress, onNodes)
	report.Summary = Summarize(report.Progress)
	if report.Summary.Drained() {
		return errs, 0
	}
	return errs, s.h.retryAfter()
}

// announceDeadline annotates the requests of the pods left with the
// deadline, Parallelism at a time, once for each value of the deadline, so
// that their interceptors or responders learn of it and of its changes.
func (s *Session) announceDeadline(ctx context.Context, deadline Deadline, progress []PodProgress) []error {
	key := deadline.key()
	var due []PodProgress
	s.mu.Lock()
	for _, p := range progress {
		if !p.Done() && p.Request.Exists && s.deadlineOnRequest[p.UID] != key {
			due = append(due, p)
		}
	}
	s.mu.Unlock()
	var mu sync.Mutex
	var errs []error
	workqueue.ParallelizeUntil(ctx, s.h.parallelism(), len(due), func(i int) {
		p := due[i]
		err := s.h.Participant.Annotate(ctx, p.Namespace, p.UID, deadline.Annotations())
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			errs = append(errs, fmt.Errorf("announcing the deadline on the request of pod %s/%s: %w", p.Namespace, p.Name, err))
			return
		}
		s.mu.Lock()
		s.deadlineOnRequest[p.UID] = key
		s.mu.Unlock()
	})
	return errs
}

// escalate evicts or deletes the pods left that are still running, each at
// most once per RetryAfter, Parallelism at a time, and marks their
// progress.
func (s *Session) escalate(ctx context.Context, how Escalation, progress []PodProgress, onNodes map[types.UID]*corev1.Pod) {
	now := s.h.now()
	var due []int
	s.mu.Lock()
	for i := range progress {
		p := &progress[i]
		last, escalated := s.escalated[p.UID]
		if escalated {
			p.Escalation, p.EscalationError = how, last.err
		}
		pod := onNodes[p.UID]
		if p.Done() || pod == nil || p.State == StateGone || p.State == StateTerminating {
			continue
		}
		if escalated && now.Before(last.at.Add(s.h.retryAfter())) {
			continue
		}
		due = append(due, i)
	}
	s.mu.Unlock()
	workqueue.ParallelizeUntil(ctx, s.h.parallelism(), len(due), func(j int) {
		p := &progress[due[j]]
		pod := onNodes[p.UID]
		var err error
		switch how {
		case EscalateDelete:
			err = s.h.Escalator.Delete(ctx, pod)
		case EscalateEvict:
			err = s.h.Escalator.Evict(ctx, pod)
		default:
			// Never silently: a pod that was not escalated is not said to
			// have been.
			err = fmt.Errorf("unknown escalation %q: nothing was done", how)
		}
		result := escalation{at: now}
		if err != nil {
			result.err = err.Error()
		}
		s.mu.Lock()
		last, escalated := s.escalated[p.UID]
		changed := !escalated || last.err != result.err
		s.escalated[p.UID] = result
		s.mu.Unlock()
		p.Escalation, p.EscalationError = how, result.err
		if changed && s.h.OnEscalated != nil && ctx.Err() == nil {
			s.h.OnEscalated(*p)
		}
	})
}
