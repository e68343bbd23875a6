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
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/evictionrequest/apiserver/pkg/drain"
	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
)

func TestTablePrinterRedrawsInPlace(t *testing.T) {
	var out bytes.Buffer
	p := newTablePrinter(&out, func() (int, int) { return 120, 6 })
	hb := now.Add(-3 * time.Second)
	finish := now.Add(2 * time.Minute)
	pods := []drain.PodProgress{
		{Namespace: "shop", Name: "a", State: drain.StateIntercepted,
			Request: participant.Status{Exists: true, ActiveInterceptor: "m.example.com", LastHeartbeat: &hb, ExpectedFinish: &finish, Message: "copying"}},
		{Namespace: "shop", Name: "b", State: drain.StateBlocked, Request: participant.Status{Exists: true, FailedEvictions: 4}, BlockingPDBs: []string{"web"}},
		{Namespace: "shop", Name: "c", State: drain.StateEvicting, Request: participant.Status{Exists: true}},
		{Namespace: "shop", Name: "d", State: drain.StateGone},
		{Namespace: "shop", Name: "e", State: drain.StatePending},
	}
	p.update(drain.Summarize(pods), pods, now)
	first := out.String()
	for _, want := range []string{"1/5 pods gone", "POD", "shop/a", "m.example.com", "3s ago", "in 2m", "copying", "shop/b", "PodDisruptionBudget web allows no disruption", "… and 2 more"} {
		if !strings.Contains(first, want) {
			t.Errorf("table lacks %q:\n%s", want, first)
		}
	}
	if strings.Contains(first, "shop/d") {
		t.Errorf("the table shows a pod that is done:\n%s", first)
	}
	out.Reset()
	p.update(drain.Summarize(pods), pods, now)
	if !strings.HasPrefix(out.String(), "\x1b[5A\r\x1b[J") {
		t.Errorf("the second drawing does not first clear the 5 lines of the first: %q", out.String()[:10])
	}
}

// A drain of 30 held pods with long names, with the notes the table keeps,
// drawn on an 80x24 terminal: the drawing keeps its summary on screen (at
// most 23 lines, the 24th holds the cursor), no line wraps, and long cells
// end with an ellipsis.
func TestTableFitsAnEightyByTwentyFourTerminal(t *testing.T) {
	const width, height = 80, 24
	var out bytes.Buffer
	p := newTablePrinter(&out, func() (int, int) { return width, height })
	hb := now.Add(-3 * time.Second)
	var pods []drain.PodProgress
	for i := range 30 {
		pods = append(pods, drain.PodProgress{
			Namespace: "payments-production-eu-west", Name: fmt.Sprintf("ledger-reconciliation-worker-7f9c8d6b5-%02d", i),
			State: drain.StateIntercepted,
			Request: participant.Status{Exists: true, ActiveInterceptor: "stateful-migration-operator.payments.example.com",
				LastHeartbeat: &hb, Message: "copying the write-ahead log to the replacement on another node, 37% done"},
		})
	}
	for i := range maxNotes + 2 {
		p.note(fmt.Sprintf("error: requesting the eviction of pod payments-production-eu-west/ledger-%d (retrying): the server is currently unable to handle the request", i))
	}
	summary := drain.Summarize(pods)
	p.update(summary, pods, now)
	p.update(summary, pods, now)
	drawings := strings.Split(out.String(), "\x1b[J")
	lines := strings.Split(strings.TrimSuffix(drawings[len(drawings)-1], "\n"), "\n")
	if len(lines) > height-1 {
		t.Errorf("the drawing has %d lines, more than the %d a 24-line terminal shows with its cursor:\n%s", len(lines), height-1, strings.Join(lines, "\n"))
	}
	if !strings.HasPrefix(lines[0], "0/30 pods gone, 30 intercepted") {
		t.Errorf("the first line is %q, not the summary", lines[0])
	}
	for _, line := range lines {
		if n := utf8.RuneCountInString(line); n > width {
			t.Errorf("a line of %d columns wraps on an 80-column terminal: %q", n, line)
		}
	}
	if !strings.HasPrefix(lines[2], "payments-production-eu-west/l") || !strings.Contains(lines[2], "…") {
		t.Errorf("a row does not end its long pod name with an ellipsis: %q", lines[2])
	}
	if !strings.Contains(out.String(), "… and ") {
		t.Errorf("the drawing does not count the rows left out:\n%s", out.String())
	}
	if want := fmt.Sprintf("\x1b[%dA\r\x1b[J", len(lines)); !strings.Contains(out.String(), want) {
		t.Errorf("the second drawing does not clear the %d lines of the first", len(lines))
	}
}
