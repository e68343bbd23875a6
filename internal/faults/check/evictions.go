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

package check

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/evictionrequest/apiserver/internal/faults/history"
)

// AuditEvent is what the checker reads of an event of kube-apiserver's
// audit log (audit.k8s.io/v1 Event).
type AuditEvent struct {
	Stage string `json:"stage"`
	Verb  string `json:"verb"`
	User  struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	RequestReceivedTimestamp time.Time `json:"requestReceivedTimestamp"`
	// Annotations are kube-apiserver's: failedOpenPrefix among them.
	Annotations map[string]string `json:"annotations,omitempty"`
}

// failedOpenPrefix begins the audit annotation kube-apiserver adds when a
// validating webhook's call failed and its failurePolicy Ignore let the
// request through; the annotation's value is the webhook's name.
const failedOpenPrefix = "failed-open.validating.webhook.admission.k8s.io/"

// failedOpen are the webhooks whose calls failed open on this request.
func (e AuditEvent) failedOpen() []string {
	var webhooks []string
	for key, webhook := range e.Annotations {
		if strings.HasPrefix(key, failedOpenPrefix) {
			webhooks = append(webhooks, webhook)
		}
	}
	sort.Strings(webhooks)
	return webhooks
}

// grantedEviction is true for the completion of an eviction kube-apiserver
// granted.
func (e AuditEvent) grantedEviction() bool {
	return e.Stage == "ResponseComplete" && e.Verb == "create" && e.ObjectRef != nil &&
		e.ObjectRef.Resource == "pods" && e.ObjectRef.Subresource == "eviction" &&
		e.ResponseStatus != nil && e.ResponseStatus.Code == 201
}

// ReadAudit reads kube-apiserver's audit log, one event a line.
func ReadAudit(r io.Reader) ([]AuditEvent, error) {
	events, err := history.ReadJSONLines[AuditEvent](r)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	return events, nil
}

// checkEvictedOnce checks that no one was granted the eviction of one pod
// twice. kube-apiserver answers an eviction of a terminating pod with 201
// without touching its budget, so several callers may each be granted it
// once (the controller, then `kubectl drain` retrying through the bridge);
// a second grant to the same caller is an eviction that caller repeated,
// which the controller never does while the pod terminates and `kubectl
// drain` never does at all. Pods are named once in a campaign (no
// StatefulSet), so the name stands for the pod.
func checkEvictedOnce(h *indexed, audit []AuditEvent, res *Result) {
	type key struct{ pod, user string }
	grants := map[key][]time.Time{}
	pods := map[string]bool{}
	for _, e := range audit {
		if !e.grantedEviction() {
			continue
		}
		pod := e.ObjectRef.Namespace + "/" + e.ObjectRef.Name
		pods[pod] = true
		k := key{pod, e.User.Username}
		grants[k] = append(grants[k], e.RequestReceivedTimestamp)
	}
	res.Checked = len(pods)
	for k, times := range grants {
		if len(times) > 1 {
			sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
			res.violate("pod %s: %d evictions granted to %s (first received %s, then %s)", k.pod, len(times), k.user, stamp(times[0]), stamp(times[1]))
		}
	}
}

// evictedPods are, by namespace/name, the times kube-apiserver received
// the evictions it granted of each pod, as its audit log says.
func evictedPods(audit []AuditEvent) map[string][]time.Time {
	pods := map[string][]time.Time{}
	for _, e := range audit {
		if e.grantedEviction() {
			pod := e.ObjectRef.Namespace + "/" + e.ObjectRef.Name
			pods[pod] = append(pods[pod], e.RequestReceivedTimestamp)
		}
	}
	return pods
}

// evictedBy is true when an eviction of pod granted by kube-apiserver was
// received at or before t: one received later found the pod terminating
// already, and kube-apiserver grants those without acting.
func evictedBy(evicted map[string][]time.Time, pod string, t time.Time) bool {
	for _, received := range evicted[pod] {
		if !received.After(t) {
			return true
		}
	}
	return false
}

// checkSkipped checks that no pod that declares participants was evicted
// (evicted, from the audit log) with no EvictionRequest at all, which skips
// every participant (an eviction the bridge let through). The violation
// names the webhooks whose calls failed open on that eviction, if any: the
// bridge's, down or too slow, under failurePolicy Ignore.
func checkSkipped(h *indexed, audit []AuditEvent, evicted map[string][]time.Time, res *Result) {
	failedOpen := map[string][]string{}
	for _, e := range audit {
		if e.grantedEviction() {
			pod := e.ObjectRef.Namespace + "/" + e.ObjectRef.Name
			failedOpen[pod] = append(failedOpen[pod], e.failedOpen()...)
		}
	}
	for pod := range evicted {
		for _, uid := range h.podsByName[pod] {
			if !hasRequest(h.lines[uid]) && declaresParticipants(h.pods[uid]) {
				res.Checked++
				why := ""
				if webhooks := failedOpen[pod]; len(webhooks) > 0 {
					why = fmt.Sprintf(" (kube-apiserver's call of %s failed open)", strings.Join(webhooks, ", "))
				}
				res.violate("pod %s: evicted with no EvictionRequest although it declares participants%s", pod, why)
			}
		}
	}
}
