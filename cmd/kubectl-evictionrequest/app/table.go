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
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/evictionrequest/apiserver/pkg/drain"
)

const (
	// defaultTableWidth and defaultTableHeight size a table drawn where no
	// terminal tells its size.
	defaultTableWidth  = 120
	defaultTableHeight = 30
	// maxNotes is how many messages the table keeps under it.
	maxNotes = 5
	// minRows is how many pod rows the table keeps before it drops notes.
	minRows = 3
)

// The columns of the table.
const (
	colPod = iota
	colState
	colInterceptor
	colHeartbeat
	colETA
	colFailed
	colMessage
	numColumns
)

var tableHeader = [numColumns]string{"POD", "STATE", "INTERCEPTOR", "HEARTBEAT", "ETA", "FAILED", "MESSAGE"}

// minWidths are the widths columns shrink to, with an ellipsis, before a
// column is dropped; shrinkOrder is the order they shrink in.
var (
	minWidths   = [numColumns]int{colPod: 12, colState: 11, colInterceptor: 11, colHeartbeat: 9, colETA: 6, colFailed: 6, colMessage: 7}
	shrinkOrder = []int{colMessage, colInterceptor, colPod, colETA, colHeartbeat}
	// dropAfter is the column after whose shrinking the message column is
	// dropped if the row is still too wide: a pod's name matters more.
	dropAfter = colInterceptor
)

// tablePrinter redraws a live table on a terminal: the summary line, then
// one row per pod that is not done, then the latest notes. Every drawing
// fits the terminal, whose size it reads each time: a line wider than the
// terminal would wrap, and a drawing taller than it would scroll, and the
// next drawing would erase the wrong lines.
type tablePrinter struct {
	out  io.Writer
	size func() (width, height int)
	// lines is the height of the last drawing.
	lines int
	// notes are the latest messages, drawn under the table: a line
	// printed between two drawings would shift what the next one erases.
	mu    sync.Mutex
	notes []string
	// deadline, when set, shows its time left on the summary line.
	deadline drain.Deadline
}

func newTablePrinter(out io.Writer, size func() (width, height int)) *tablePrinter {
	return &tablePrinter{out: out, size: size}
}

func (p *tablePrinter) note(message string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.notes = append(p.notes, message)
	if len(p.notes) > maxNotes {
		p.notes = p.notes[len(p.notes)-maxNotes:]
	}
}

func (p *tablePrinter) setDeadline(d drain.Deadline) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.deadline = d
}

func (p *tablePrinter) update(summary drain.Summary, pods []drain.PodProgress, now time.Time) {
	width, height := p.size()
	p.mu.Lock()
	notes := append([]string(nil), p.notes...)
	deadline := p.deadline
	p.mu.Unlock()
	lines := drawTable(summary, pods, notes, now, max(width, 20), max(height, 2))
	if deadline.IsSet() {
		lines[0] = drain.Truncate(summary.String()+"; "+deadline.Left(now), max(width, 20))
	}
	// Move up over the last drawing and clear it before drawing again.
	if p.lines > 0 {
		fmt.Fprintf(p.out, "\x1b[%dA\r\x1b[J", p.lines)
	}
	fmt.Fprint(p.out, strings.Join(lines, "\n")+"\n")
	p.lines = len(lines)
}

// drawTable lays the progress out in at most height-1 lines of at most
// width columns: the summary first, then as many rows as fit, then the
// notes that still fit.
func drawTable(summary drain.Summary, pods []drain.PodProgress, notes []string, now time.Time, width, height int) []string {
	lines := []string{drain.Truncate(summary.String(), width)}
	avail := height - 1 - len(lines)
	var rows [][numColumns]string
	for _, pod := range pods {
		if !pod.Done() {
			rows = append(rows, tableRow(pod, now))
		}
	}
	if avail < 2 || len(rows) == 0 {
		return append(lines, lastNotes(notes, avail, width)...)
	}
	avail-- // the header
	shown := min(len(rows), avail-len(notes))
	for shown < min(len(rows), minRows) && len(notes) > 0 {
		notes = notes[1:]
		shown = min(len(rows), avail-len(notes))
	}
	if shown < len(rows) {
		shown = max(shown-1, 0) // the line that counts the rest
	}
	widths := fitColumns(rows[:shown], width)
	lines = append(lines, formatRow(tableHeader, widths, width))
	for _, row := range rows[:shown] {
		lines = append(lines, formatRow(row, widths, width))
	}
	if shown < len(rows) {
		lines = append(lines, drain.Truncate(fmt.Sprintf("… and %d more", len(rows)-shown), width))
	}
	return append(lines, lastNotes(notes, height-1-len(lines), width)...)
}

// tableRow is the row of a pod.
func tableRow(pod drain.PodProgress, now time.Time) [numColumns]string {
	interceptor, heartbeat, expected := "-", "-", "-"
	if pod.State == drain.StateIntercepted {
		interceptor = pod.Request.ActiveInterceptor
		heartbeat, expected = drain.Ago(now, pod.Request.LastHeartbeat), drain.ETA(now, pod.Request.ExpectedFinish)
	}
	message := pod.Request.Message
	if pod.State == drain.StateBlocked && len(pod.BlockingPDBs) > 0 {
		message = "PodDisruptionBudget " + strings.Join(pod.BlockingPDBs, ", ") + " allows no disruption"
	}
	return [numColumns]string{
		pod.Namespace + "/" + pod.Name, string(pod.State), interceptor, heartbeat, expected,
		strconv.Itoa(int(pod.Request.FailedEvictions)), strings.Join(strings.Fields(message), " "),
	}
}

// fitColumns sizes the columns to their widest cell, then shrinks them in
// shrinkOrder, dropping the message column once the interceptor column is
// at its minimum, until the row fits width.
func fitColumns(rows [][numColumns]string, width int) [numColumns]int {
	var widths [numColumns]int
	for i, h := range tableHeader {
		widths[i] = utf8.RuneCountInString(h)
	}
	for _, row := range rows {
		for i, cell := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	for _, col := range shrinkOrder {
		if over := rowWidth(widths) - width; over > 0 {
			widths[col] = max(minWidths[col], widths[col]-over)
		}
		if col == dropAfter && rowWidth(widths) > width {
			widths[colMessage] = 0
		}
	}
	return widths
}

// rowWidth is the width of a row of columns of widths, two spaces apart;
// a column of width 0 is left out.
func rowWidth(widths [numColumns]int) int {
	total, columns := 0, 0
	for _, w := range widths {
		if w > 0 {
			total += w
			columns++
		}
	}
	return total + 2*(columns-1)
}

// formatRow pads or cuts each cell to its column and the line to width.
func formatRow(cells [numColumns]string, widths [numColumns]int, width int) string {
	var b strings.Builder
	for i, cell := range cells {
		if widths[i] == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("  ")
		}
		cell = drain.Truncate(cell, widths[i])
		b.WriteString(cell)
		if i < numColumns-1 {
			b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell)))
		}
	}
	return cutLine(strings.TrimRight(b.String(), " "), width)
}

// cutLine cuts line to at most width runes, ending it with an ellipsis
// when it cuts; unlike drain.Truncate it keeps the spaces that align the
// columns.
func cutLine(line string, width int) string {
	if r := []rune(line); len(r) > width {
		return string(r[:width-1]) + "…"
	}
	return line
}

// lastNotes are the latest notes that fit in n lines, each cut to width.
func lastNotes(notes []string, n, width int) []string {
	if n <= 0 {
		return nil
	}
	if len(notes) > n {
		notes = notes[len(notes)-n:]
	}
	lines := make([]string, 0, len(notes))
	for _, note := range notes {
		lines = append(lines, drain.Truncate(note, width))
	}
	return lines
}
