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

package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	policyutil "github.com/evictionrequest/apiserver/pkg/api/policy/v1"
	"github.com/evictionrequest/apiserver/pkg/bridge/metrics"
)

// Path is where the bridge's webhook is served.
const Path = "/eviction-bridge"

// maxReviewBytes bounds an AdmissionReview the webhook reads: an Eviction
// is small, and kube-apiserver's own limit on a request is 3 MiB.
const maxReviewBytes = 3 << 20

// ServeHTTP answers an AdmissionReview (admission.k8s.io/v1) of a CREATE of
// pods/eviction with the bridge's decision. A review of anything else is
// allowed: the webhook configuration selects only pods/eviction. With
// Config.Callers, a caller that is not kube-apiserver gets 401 or 403
// before its body is read.
//
// kube-apiserver says in the timeout parameter how long it waits for the
// answer; the bridge stops its work a moment before (answerMargin), so
// that a write that hangs is answered with a refusal rather than left to
// the webhook's failurePolicy.
func (b *Bridge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := b.cfg.Clock.Now()
	ctx := r.Context()
	if budget, ok := reviewBudget(r); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, budget)
		defer cancel()
	}
	authenticated, ok := b.authenticate(w, r)
	if !ok {
		return
	}
	if r.Method != http.MethodPost {
		http.Error(w, "POST an AdmissionReview", http.StatusMethodNotAllowed)
		return
	}
	var review admissionv1.AdmissionReview
	body, err := io.ReadAll(io.LimitReader(r.Body, maxReviewBytes))
	if err == nil {
		err = json.Unmarshal(body, &review)
	}
	if err != nil || review.Request == nil {
		http.Error(w, fmt.Sprintf("not an AdmissionReview: %v", err), http.StatusBadRequest)
		return
	}
	req := review.Request
	response := &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
	outcome := "ignored"
	if req.Operation == admissionv1.Create && req.SubResource == "eviction" && req.Resource.Resource == "pods" {
		decision, err := b.Decide(ctx, evictionOf(req, authenticated))
		if err != nil {
			// The bridge cannot tell whether the pod is protected:
			// kube-apiserver applies the webhook's failurePolicy.
			metrics.Decisions.WithLabelValues(metrics.OutcomeError).Inc()
			klog.FromContext(ctx).Error(err, "Deciding an eviction", "pod", klog.KRef(req.Namespace, req.Name))
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		outcome = decision.Outcome
		if !decision.Allowed {
			response.Allowed = false
			response.Result = refusal(req.Name, decision)
		}
		metrics.Decisions.WithLabelValues(outcome).Inc()
		metrics.DecisionDuration.Observe(b.cfg.Clock.Since(start).Seconds())
	}
	klog.FromContext(ctx).V(4).Info("Answered an eviction", "pod", klog.KRef(req.Namespace, req.Name), "user", req.UserInfo.Username,
		"authenticated", authenticated, "allowed", response.Allowed, "outcome", outcome)
	review.Response = response
	review.Request = nil
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(review); err != nil {
		klog.FromContext(ctx).Error(err, "Writing an AdmissionReview")
	}
}

// authenticate is true when r comes from kube-apiserver, as its client
// certificate proves, and ok when the bridge serves r: a caller that is
// not kube-apiserver is refused with 401 or 403 and counted, unless the
// bridge authenticates no caller (then authenticated is false).
func (b *Bridge) authenticate(w http.ResponseWriter, r *http.Request) (authenticated, ok bool) {
	if b.cfg.Callers == nil {
		return false, true
	}
	name, err := b.cfg.Callers.Authenticate(r)
	var refused *errCallerRefused
	if errors.As(err, &refused) {
		metrics.RefusedCalls.WithLabelValues(refused.reason).Inc()
		klog.FromContext(r.Context()).V(2).Info("Refused a call of the eviction API bridge", "remoteAddress", r.RemoteAddr, "reason", refused.reason, "err", err)
		http.Error(w, "the eviction API bridge serves kube-apiserver only: "+err.Error(), refused.code())
		return false, false
	}
	klog.FromContext(r.Context()).V(5).Info("A call of the eviction API bridge from kube-apiserver", "certificate", name)
	return true, true
}

// answerMargin is how long before kube-apiserver gives up on a review the
// bridge stops working on it and answers: the time its answer takes back.
const answerMargin = time.Second

// reviewBudget is how long the bridge may work on the review r: the
// timeout kube-apiserver sent with it, less answerMargin (half of a
// timeout shorter than two margins); false when r names none.
func reviewBudget(r *http.Request) (time.Duration, bool) {
	timeout, err := time.ParseDuration(r.URL.Query().Get("timeout"))
	if err != nil || timeout <= 0 {
		return 0, false
	}
	return timeout - min(answerMargin, timeout/2), true
}

// refusal is the Status of the refusal d of the eviction of pod: 429 with
// when to retry, or 403 for a caller the bridge refuses whatever happens
// next.
func refusal(pod string, d Decision) *metav1.Status {
	status := &metav1.Status{
		Status: metav1.StatusFailure, Code: d.code(), Reason: metav1.StatusReasonTooManyRequests,
		Message: d.Message,
		Details: &metav1.StatusDetails{Name: pod, Kind: "pods", RetryAfterSeconds: int32(d.RetryAfter / time.Second)},
	}
	if status.Code == http.StatusForbidden {
		status.Reason = metav1.StatusReasonForbidden
		status.Details.RetryAfterSeconds = 0
	}
	return status
}

// evictionOf is the eviction req asks for: the pod, the caller, whether it
// is a dry run (of the request, or of the eviction itself, whose
// deleteOptions kubectl drain --dry-run=server sets: the request then is
// not one), and whether it asks to skip the pod's participants.
// authenticated says whether req came from kube-apiserver.
func evictionOf(req *admissionv1.AdmissionRequest, authenticated bool) Eviction {
	e := Eviction{Namespace: req.Namespace, Pod: req.Name, User: req.UserInfo.Username, Groups: req.UserInfo.Groups,
		UID: req.UserInfo.UID, Extra: req.UserInfo.Extra, Authenticated: authenticated}
	var eviction policyv1.Eviction
	decoded := json.Unmarshal(req.Object.Raw, &eviction) == nil
	e.DryRun = ptr.Deref(req.DryRun, false) || decoded && eviction.DeleteOptions != nil && slices.Contains(eviction.DeleteOptions.DryRun, metav1.DryRunAll)
	if decoded {
		e.SkipParticipants, e.AsksToSkip = policyutil.SkipsParticipants(&eviction)
	}
	return e
}
