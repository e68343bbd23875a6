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
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/evictionrequest/apiserver/internal/wrappers"
)

// fakeEscalator records the escalations and fails those the test says.
type fakeEscalator struct {
	mu      sync.Mutex
	evicted []string
	deleted []string
	fail    error
}

func (e *fakeEscalator) Evict(_ context.Context, pod *corev1.Pod) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.evicted = append(e.evicted, pod.Name)
	return e.fail
}

func (e *fakeEscalator) Delete(_ context.Context, pod *corev1.Pod) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.deleted = append(e.deleted, pod.Name)
	return e.fail
}

func (e *fakeEscalator) take() (evicted, deleted []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	evicted, deleted, e.evicted, e.deleted = e.evicted, e.deleted, nil, nil
	return evicted, deleted
}

// deadlineFixture is a session of node-a with db-0 and a deadline a minute
// after the clock's start.
func deadlineFixture(t *testing.T, how Escalation) (*sessionFixture, *fakeEscalator, *[]PodProgress) {
	t.Helper()
	f := newSessionFixture(wrappers.MakePod("db-0").Node("node-a").Obj())
	escalator := &fakeEscalator{}
	var escalated []PodProgress
	f.helper.Escalator = escalator
	f.helper.OnEscalated = func(p PodProgress) { escalated = append(escalated, p) }
	f.session.SetDeadline(Deadline{At: f.clock.Now().Add(time.Minute), Escalation: how})
	f.sync(t)
	f.requests.showWritten()
	return f, escalator, &escalated
}

// The requests carry the deadline once each, and a session wakes its
// caller at the deadline.
func TestTheDeadlineIsAnnouncedOnTheRequests(t *testing.T) {
	f, _, _ := deadlineFixture(t, EscalateEvict)
	report := f.sync(t)
	if report.RetryIn != time.Minute {
		t.Errorf("RetryIn %s, want the minute left until the deadline", report.RetryIn)
	}
	f.sync(t)
	annotated := f.requests.annotated[wrappers.MakePod("db-0").Obj().UID]
	if len(annotated) != 1 {
		t.Fatalf("the request was annotated %d times, want once", len(annotated))
	}
	got := map[string]string{}
	for k, v := range annotated[0] {
		got[k] = *v
	}
	want := map[string]string{DeadlineAnnotation: "2026-11-22T10:01:00Z", OnDeadlineAnnotation: "evict"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	if d, ok := RequestDeadline(got); !ok || !d.At.Equal(f.clock.Now().Add(time.Minute)) || d.Escalation != EscalateEvict {
		t.Errorf("RequestDeadline read back %+v, %v", d, ok)
	}
}

// A withdrawal removes the deadline the drain announced, so that the
// interceptor reads no deadline nobody holds; a deadline another drain
// announced since stays.
func TestAWithdrawalRemovesTheAnnouncedDeadline(t *testing.T) {
	for _, tc := range []struct {
		name        string
		overwritten bool
	}{{"announced by this drain", false}, {"announced since by another drain", true}} {
		t.Run(tc.name, func(t *testing.T) {
			f, _, _ := deadlineFixture(t, EscalateFail)
			f.sync(t)
			uid := wrappers.MakePod("db-0").Obj().UID
			if tc.overwritten {
				later := Deadline{At: f.clock.Now().Add(time.Hour), Escalation: EscalateDelete}
				if err := f.requests.Annotate(context.Background(), "", uid, later.Annotations()); err != nil {
					t.Fatal(err)
				}
			}
			f.requests.showWritten()
			before := len(f.requests.annotated[uid])

			report := f.session.Withdraw(context.Background())
			if report.Withdrawn != 1 || len(report.Errors) != 0 {
				t.Fatalf("withdrawal: %+v", report)
			}
			f.requests.showWritten()
			_, shown := RequestDeadline(f.requests.cache[uid].Annotations)
			if removed := len(f.requests.annotated[uid]) > before; removed == tc.overwritten || shown != tc.overwritten {
				t.Errorf("annotations written at the withdrawal %v, a deadline left on the request %v; want a deadline left only if another drain announced it",
					f.requests.annotated[uid][before:], shown)
			}
		})
	}
}

// Past the deadline the pods left are evicted through the Eviction API,
// once per RetryAfter; a refusal shows on the pod and is reported again
// only when it changes.
func TestEvictAtTheDeadline(t *testing.T) {
	f, escalator, escalated := deadlineFixture(t, EscalateEvict)
	f.clock.Step(59 * time.Second)
	f.sync(t)
	if evicted, _ := escalator.take(); len(evicted) != 0 {
		t.Fatalf("evicted %v before the deadline", evicted)
	}

	escalator.fail = errors.New("Cannot evict pod as it would violate the pod's disruption budget.")
	f.clock.Step(time.Second)
	report := f.sync(t)
	if evicted, _ := escalator.take(); !cmp.Equal(evicted, []string{"db-0"}) {
		t.Fatalf("evicted %v at the deadline, want db-0", evicted)
	}
	p := report.Progress[0]
	if p.Escalation != EscalateEvict || !strings.Contains(p.Describe(f.clock.Now()), "deadline passed: eviction refused: Cannot evict pod") {
		t.Errorf("progress %q", p.Describe(f.clock.Now()))
	}
	if report.Summary.Escalated != 1 || report.RetryIn != 5*time.Second {
		t.Errorf("summary %q, retry in %s", report.Summary, report.RetryIn)
	}

	f.clock.Step(time.Second)
	if report := f.sync(t); report.Progress[0].EscalationError == "" {
		t.Error("the refusal was forgotten between two attempts")
	}
	if evicted, _ := escalator.take(); len(evicted) != 0 {
		t.Errorf("evicted again %v a second later", evicted)
	}
	f.clock.Step(5 * time.Second)
	f.sync(t)
	if evicted, _ := escalator.take(); len(evicted) != 1 {
		t.Errorf("evicted %v after RetryAfter, want db-0 again", evicted)
	}
	if len(*escalated) != 1 {
		t.Errorf("OnEscalated called %d times for one unchanged refusal, want once", len(*escalated))
	}

	escalator.fail = nil
	f.clock.Step(5 * time.Second)
	if report := f.sync(t); report.Progress[0].EscalationError != "" || len(*escalated) != 2 {
		t.Errorf("after a granted eviction: error %q, %d reports", report.Progress[0].EscalationError, len(*escalated))
	}
}

// Past the deadline with delete the pods left are deleted; a pod already
// terminating is left to finish.
func TestDeleteAtTheDeadline(t *testing.T) {
	f, escalator, _ := deadlineFixture(t, EscalateDelete)
	f.pods.set("node-a", wrappers.MakePod("db-0").Node("node-a").Obj(), wrappers.MakePod("db-1").Node("node-a").Terminating(heartbeat).Obj())
	f.sync(t)
	f.requests.showWritten()
	f.clock.Step(time.Minute)
	report := f.sync(t)
	if evicted, deleted := escalator.take(); len(evicted) != 0 || !cmp.Equal(deleted, []string{"db-0"}) {
		t.Errorf("evicted %v, deleted %v; want db-0 deleted", evicted, deleted)
	}
	if !strings.Contains(report.Progress[0].Describe(f.clock.Now()), "deadline passed: deleted, PodDisruptionBudgets ignored") {
		t.Errorf("progress %q", report.Progress[0].Describe(f.clock.Now()))
	}
}

// With fail, a passed deadline escalates nothing: the caller stops.
func TestFailAtTheDeadlineEscalatesNothing(t *testing.T) {
	f, escalator, _ := deadlineFixture(t, EscalateFail)
	f.clock.Step(2 * time.Minute)
	report := f.sync(t)
	if evicted, deleted := escalator.take(); len(evicted)+len(deleted) != 0 {
		t.Errorf("evicted %v, deleted %v", evicted, deleted)
	}
	if !report.Deadline.Passed(f.clock.Now()) || report.Progress[0].Escalation != "" {
		t.Errorf("report: deadline %+v, progress %+v", report.Deadline, report.Progress[0])
	}
}

// An escalation the drain does not know (one no parser let through) does
// nothing and says so on the pod's line, rather than passing for done.
func TestAnUnknownEscalationIsAnError(t *testing.T) {
	f, escalator, escalated := deadlineFixture(t, Escalation("force"))
	f.clock.Step(2 * time.Minute)
	report := f.sync(t)
	if evicted, deleted := escalator.take(); len(evicted)+len(deleted) != 0 {
		t.Errorf("evicted %v, deleted %v", evicted, deleted)
	}
	if got := report.Progress[0].EscalationError; !strings.Contains(got, `unknown escalation "force"`) || len(*escalated) != 1 {
		t.Errorf("escalation error %q and %d reports, want the unknown escalation reported once", got, len(*escalated))
	}
}

// ParseEscalation reads the three names, takes empty as the default
// (fail), and lists the names when it refuses one.
func TestParseEscalation(t *testing.T) {
	for s, want := range map[string]Escalation{"fail": EscalateFail, "evict": EscalateEvict, "delete": EscalateDelete, "": EscalateFail} {
		if e, err := ParseEscalation(s); err != nil || e != want {
			t.Errorf("ParseEscalation(%q) = %q, %v; want %q", s, e, err, want)
		}
	}
	if _, err := ParseEscalation("force"); err == nil || err.Error() != `"force" is not one of fail, evict, delete` {
		t.Errorf("ParseEscalation(force) = %v, want an error listing the escalations", err)
	}
	if got := Escalation("").OrDefault(); got != EscalateFail {
		t.Errorf("the zero Escalation means %q, want fail", got)
	}
}

// The one parser of a deadline: a duration from the drain's start or an
// RFC 3339 time on a Node; on a request, whose readers do not know the
// drain's start, only a time.
func TestParseDeadline(t *testing.T) {
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, value string
		start       time.Time
		want        time.Time
		wantErr     string
	}{
		{"a duration from the start", "30m", start, start.Add(30 * time.Minute), ""},
		{"a time", "2026-11-22T12:00:00Z", start, start.Add(2 * time.Hour), ""},
		{"a time in another zone", "2026-11-22T13:00:00+01:00", start, start.Add(2 * time.Hour), ""},
		{"a time on a request", "2026-11-22T12:00:00Z", time.Time{}, start.Add(2 * time.Hour), ""},
		{"a duration on a request", "30m", time.Time{}, time.Time{}, `"30m" is not an RFC 3339 time (such as 2026-01-02T15:04:05Z)`},
		{"a zero duration", "0s", start, time.Time{}, `"0s" is not a positive duration`},
		{"a negative duration", "-5m", start, time.Time{}, `"-5m" is not a positive duration`},
		{"neither", "tomorrow", start, time.Time{}, `"tomorrow" is neither a positive duration (such as 30m) nor an RFC 3339 time (such as 2026-01-02T15:04:05Z)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseDeadline(tc.value, tc.start)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Errorf("ParseDeadline(%q) = %v, %v; want the error %q", tc.value, got, err, tc.wantErr)
				}
				return
			}
			if err != nil || !got.Equal(tc.want) {
				t.Errorf("ParseDeadline(%q) = %v, %v; want %v", tc.value, got, err, tc.want)
			}
		})
	}
}

// A Node's annotations override the defaults; what does not parse leaves
// the default in place and names the annotation. A request's deadline
// reads back what the drain wrote, with the default escalation when its
// annotation is absent or invalid.
func TestDeadlineAnnotations(t *testing.T) {
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	defaults := Deadline{At: start.Add(time.Hour), Escalation: EscalateFail}
	d, err := NodeDeadline(map[string]string{DeadlineAnnotation: "10m", OnDeadlineAnnotation: "delete"}, start, defaults)
	if err != nil || !d.At.Equal(start.Add(10*time.Minute)) || d.Escalation != EscalateDelete {
		t.Errorf("NodeDeadline() = %+v, %v", d, err)
	}
	d, err = NodeDeadline(map[string]string{DeadlineAnnotation: "soon", OnDeadlineAnnotation: "evict"}, start, defaults)
	if err == nil || !strings.Contains(err.Error(), "annotation "+DeadlineAnnotation+`: "soon" is neither`) || !d.At.Equal(defaults.At) || d.Escalation != EscalateEvict {
		t.Errorf("NodeDeadline() with an invalid deadline = %+v, %v; want the default deadline, the escalation and the error", d, err)
	}
	d, err = NodeDeadline(map[string]string{OnDeadlineAnnotation: "wait"}, start, defaults)
	if err == nil || !strings.Contains(err.Error(), "annotation "+OnDeadlineAnnotation+`: "wait" is not one of`) || d != defaults {
		t.Errorf("NodeDeadline() with an invalid escalation = %+v, %v; want the defaults and the error", d, err)
	}

	written := Deadline{At: start.Add(time.Hour), Escalation: EscalateEvict}
	annotations := map[string]string{}
	for k, v := range written.Annotations() {
		annotations[k] = *v
	}
	if got, ok := RequestDeadline(annotations); !ok || got != written {
		t.Errorf("RequestDeadline() read back %+v, %v; want %+v", got, ok, written)
	}
	annotations[OnDeadlineAnnotation] = "later"
	if got, ok := RequestDeadline(annotations); !ok || got.Escalation != DefaultEscalation {
		t.Errorf("RequestDeadline() with an invalid escalation = %+v, %v; want the default escalation", got, ok)
	}
	if _, ok := RequestDeadline(map[string]string{DeadlineAnnotation: "1h"}); ok {
		t.Error("RequestDeadline() took a duration, which no drain writes on a request")
	}
}

// A changed deadline is announced again.
func TestAChangedDeadlineIsAnnouncedAgain(t *testing.T) {
	f, _, _ := deadlineFixture(t, EscalateFail)
	f.sync(t)
	f.session.SetDeadline(Deadline{At: f.clock.Now().Add(time.Hour), Escalation: EscalateDelete})
	f.sync(t)
	f.sync(t)
	annotated := f.requests.annotated[wrappers.MakePod("db-0").Obj().UID]
	if len(annotated) != 2 || *annotated[1][OnDeadlineAnnotation] != "delete" {
		t.Errorf("the request was annotated %d times, want twice, the second with the new deadline", len(annotated))
	}
}
