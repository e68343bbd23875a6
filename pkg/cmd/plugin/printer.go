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
	"fmt"
	"io"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/evictionrequest/apiserver/pkg/drain"
)

// progressPrinter shows the progress of a drain.
type progressPrinter interface {
	// update shows the summary and the pods that are not settled.
	update(summary drain.Summary, pods []drain.PodProgress, now time.Time)
	// note shows a message besides the progress.
	note(message string)
}

// linePrinter prints one line per change, so that logs stay readable: a
// pod's line when its state, interceptor, failures or message change, and
// the summary when it changes.
type linePrinter struct {
	out     io.Writer
	last    map[string]string
	summary string
}

func newLinePrinter(out io.Writer) *linePrinter {
	return &linePrinter{out: out, last: map[string]string{}}
}

func (p *linePrinter) note(message string) {
	fmt.Fprintln(p.out, message)
}

func (p *linePrinter) update(summary drain.Summary, pods []drain.PodProgress, now time.Time) {
	for _, pod := range pods {
		name := pod.Namespace + "/" + pod.Name
		// What counts as a change is what describe prints, but ages, which
		// change every second.
		key := string(pod.State)
		switch pod.State {
		case drain.StateIntercepted, drain.StateBlocked, drain.StateEvicting, drain.StateCanceled:
			key = fmt.Sprintf("%s|%s|%d|%v|%s", pod.State, pod.ActiveInterceptor, pod.FailedEvictions, pod.BlockingPDBs, pod.Message)
		}
		if p.last[name] == key {
			continue
		}
		p.last[name] = key
		fmt.Fprintf(p.out, "pod %s: %s\n", name, describe(pod, now))
	}
	if s := summary.String(); s != p.summary {
		p.summary = s
		fmt.Fprintln(p.out, s)
	}
}

// describe is the state of a pod in one line, with what it waits for.
func describe(p drain.PodProgress, now time.Time) string {
	switch p.State {
	case drain.StateIntercepted, drain.StateBlocked:
		return fmt.Sprintf("%s: %s%s", p.State, blocker(p, now), messageSuffix(p.Message))
	case drain.StateEvicting, drain.StateCanceled:
		return fmt.Sprintf("%s%s", p.State, messageSuffix(p.Message))
	}
	return string(p.State)
}

func messageSuffix(message string) string {
	if message == "" {
		return ""
	}
	return ": " + truncate(message, 200)
}

// tablePrinter redraws a live table on a terminal: the summary line, then
// one row per pod that is not settled.
type tablePrinter struct {
	out io.Writer
	// maxRows bounds the rows so that the table fits the terminal.
	maxRows int
	lines   int
	// notes are the latest messages, drawn under the table: a line
	// printed between two drawings would shift what the next one erases.
	mu    sync.Mutex
	notes []string
}

// maxNotes is how many messages the table keeps under it.
const maxNotes = 5

func (p *tablePrinter) note(message string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.notes = append(p.notes, truncate(message, 160))
	if len(p.notes) > maxNotes {
		p.notes = p.notes[len(p.notes)-maxNotes:]
	}
}

func (p *tablePrinter) update(summary drain.Summary, pods []drain.PodProgress, now time.Time) {
	var b strings.Builder
	fmt.Fprintln(&b, summary.String())
	w := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
	fmt.Fprintln(w, "POD\tSTATE\tINTERCEPTOR\tHEARTBEAT\tETA\tFAILED\tMESSAGE")
	shown := 0
	for _, pod := range pods {
		if pod.Settled() {
			continue
		}
		if shown == p.maxRows {
			fmt.Fprintf(w, "… and %d more\t\t\t\t\t\t\n", countUnsettled(pods)-shown)
			break
		}
		shown++
		interceptor, heartbeat, expected := "-", "-", "-"
		if pod.State == drain.StateIntercepted {
			interceptor, heartbeat, expected = pod.ActiveInterceptor, ago(now, pod.LastHeartbeat), eta(now, pod.ExpectedFinish)
		}
		message := pod.Message
		if pod.State == drain.StateBlocked && len(pod.BlockingPDBs) > 0 {
			message = "PodDisruptionBudget " + strings.Join(pod.BlockingPDBs, ", ") + " allows no disruption"
		}
		fmt.Fprintf(w, "%s/%s\t%s\t%s\t%s\t%s\t%d\t%s\n", pod.Namespace, pod.Name, pod.State, interceptor, heartbeat, expected, pod.FailedEvictions, truncate(message, 60))
	}
	_ = w.Flush()
	p.mu.Lock()
	for _, n := range p.notes {
		fmt.Fprintln(&b, n)
	}
	p.mu.Unlock()
	// Move up over the last drawing and clear it before drawing again.
	if p.lines > 0 {
		fmt.Fprintf(p.out, "\x1b[%dA\r\x1b[J", p.lines)
	}
	fmt.Fprint(p.out, b.String())
	p.lines = strings.Count(b.String(), "\n")
}

func countUnsettled(pods []drain.PodProgress) int {
	n := 0
	for _, pod := range pods {
		if !pod.Settled() {
			n++
		}
	}
	return n
}
