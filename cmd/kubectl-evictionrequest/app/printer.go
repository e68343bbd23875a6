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
	"os"
	"time"

	"golang.org/x/term"

	"github.com/evictionrequest/apiserver/pkg/drain"
)

// progressPrinter shows the progress of a drain.
type progressPrinter interface {
	// update shows the summary and the pods that are not done.
	update(summary drain.Summary, pods []drain.PodProgress, now time.Time)
	// note shows a message besides the progress.
	note(message string)
	// setDeadline shows the time left until the drain's deadline.
	setDeadline(d drain.Deadline)
}

// newPrinter returns the printer of the --output mode: a live table on a
// terminal (or always, with "table"), one line per change otherwise.
func newPrinter(output string, out io.Writer) progressPrinter {
	f, isFile := out.(*os.File)
	onTerminal := isFile && term.IsTerminal(int(f.Fd()))
	switch {
	case output == "table" && !onTerminal:
		return newTablePrinter(out, func() (int, int) { return defaultTableWidth, defaultTableHeight })
	case output == "table", output == "auto" && onTerminal:
		return newTablePrinter(out, func() (int, int) {
			width, height, err := term.GetSize(int(f.Fd()))
			if err != nil {
				return defaultTableWidth, defaultTableHeight
			}
			return width, height
		})
	}
	return newLinePrinter(out)
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

// setDeadline does nothing: a line printer says the deadline once, as a
// note, rather than a countdown line per second.
func (p *linePrinter) setDeadline(drain.Deadline) {}

func (p *linePrinter) update(summary drain.Summary, pods []drain.PodProgress, now time.Time) {
	for _, pod := range pods {
		name := pod.Namespace + "/" + pod.Name
		// What counts as a change is what Describe prints, but ages, which
		// change every second.
		key := string(pod.State)
		switch pod.State {
		case drain.StateIntercepted, drain.StateBlocked, drain.StateEvicting, drain.StateCanceled:
			key = fmt.Sprintf("%s|%s|%d|%v|%s", pod.State, pod.Request.ActiveInterceptor, pod.Request.FailedEvictions, pod.BlockingPDBs, pod.Request.Message)
		}
		key += "|" + pod.DescribeEscalation()
		if p.last[name] == key {
			continue
		}
		p.last[name] = key
		fmt.Fprintf(p.out, "pod %s: %s\n", name, pod.Describe(now))
	}
	if s := summary.String(); s != p.summary {
		p.summary = s
		fmt.Fprintln(p.out, s)
	}
}
