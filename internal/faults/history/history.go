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

// Package history is the record a fault campaign keeps and its checker
// reads: every object of the drain as a watch saw it, the faults injected
// and the drains run, one JSON object a line, each stamped with the time the
// recorder saw it. With kube-apiserver's audit log of pod evictions and
// deletions it is the whole history; the checker reads nothing else, and
// nothing of the code under test.
package history

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// The kinds of object the recorder watches.
const (
	KindPod             = "Pod"
	KindEvictionRequest = "EvictionRequest"
	// KindLifecycleEvictionRequest and KindEviction are lifecycle.k8s.io's
	// EvictionRequest and Eviction.
	KindLifecycleEvictionRequest = "lifecycle.k8s.io/EvictionRequest"
	KindEviction                 = "Eviction"
	KindPodDisruptionBudget      = "PodDisruptionBudget"
	KindDeployment               = "Deployment"
	KindNode                     = "Node"
)

// The types of a watched entry: watch.EventType's, and Gap for an object
// listed again after its watch could not resume (the events between the
// last one recorded and this one are lost, so the checker cannot tell what
// happened in between).
const (
	Added    = "ADDED"
	Modified = "MODIFIED"
	Deleted  = "DELETED"
	Gap      = "GAP"
)

// The drain kinds a campaign runs.
const (
	DrainDeclarative = "declarative"
	DrainPlugin      = "plugin"
	DrainKubectl     = "kubectl"
)

// Entry is one line of the record: an observed object, a fault or a step of
// a drain.
type Entry struct {
	// Time is when the recorder saw it, on the clock of kube-apiserver's
	// machine (the audit log's).
	Time time.Time `json:"time"`

	// Kind, Type and Object are a watched object's.
	Kind   string          `json:"kind,omitempty"`
	Type   string          `json:"type,omitempty"`
	Object json.RawMessage `json:"object,omitempty"`

	// Fault is an injected fault.
	Fault *Fault `json:"fault,omitempty"`
	// Drain is the start or the end of a drain.
	Drain *Drain `json:"drain,omitempty"`
}

// Fault is one fault of the schedule.
type Fault struct {
	// Kind is what was done: kill, freeze, thaw, restart, cut, heal...
	Kind string `json:"kind"`
	// Target is the process or path it was done to.
	Target string `json:"target"`
	// Detail says more, such as how long a freeze lasted.
	Detail string `json:"detail,omitempty"`
}

// Drain is the start or the end of one drain.
type Drain struct {
	// ID names the drain; its start and end carry the same.
	ID string `json:"id"`
	// Kind is DrainDeclarative, DrainPlugin or DrainKubectl.
	Kind string `json:"kind"`
	// Nodes are the nodes it drains.
	Nodes []string `json:"nodes,omitempty"`
	// Phase is "start", "retry" or "end".
	Phase string `json:"phase"`
	// Outcome, at the end, is "drained", or what ended it otherwise (its
	// deadline, an error); at a retry, what ended the attempt.
	Outcome string `json:"outcome,omitempty"`
	// Escalation is the drain's deadline action (fail, evict, delete), when
	// it has a deadline.
	Escalation string `json:"escalation,omitempty"`
}

// The phases of a Drain.
const (
	PhaseStart = "start"
	// PhaseRetry records a command drain run again, as an admin's script
	// would, after an attempt kube-apiserver's outage ended: the drain goes
	// on, and only its end says how it ended.
	PhaseRetry = "retry"
	PhaseEnd   = "end"
)

// OutcomeDrained is the outcome of a drain that drained its nodes.
const OutcomeDrained = "drained"

// Writer appends entries to a record; it is safe for concurrent use.
type Writer struct {
	mu  sync.Mutex
	w   *bufio.Writer
	f   *os.File
	now func() time.Time
}

// Create starts a record at path.
func Create(path string) (*Writer, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &Writer{w: bufio.NewWriter(f), f: f, now: time.Now}, nil
}

// Object records a watched object.
func (w *Writer) Object(kind, eventType string, object any) error {
	e, err := ObjectEntry(kind, eventType, object)
	if err != nil {
		return err
	}
	return w.write(e)
}

// ObjectEntry is the entry of a watched object, its time not yet set.
func ObjectEntry(kind, eventType string, object any) (Entry, error) {
	raw, err := json.Marshal(object)
	if err != nil {
		return Entry{}, err
	}
	return Entry{Kind: kind, Type: eventType, Object: raw}, nil
}

// Fault records a fault as it is injected.
func (w *Writer) Fault(f Fault) error {
	return w.write(Entry{Fault: &f})
}

// Drain records the start or the end of a drain.
func (w *Writer) Drain(d Drain) error {
	return w.write(Entry{Drain: &d})
}

func (w *Writer) write(e Entry) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	e.Time = w.now()
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if _, err := w.w.Write(append(line, '\n')); err != nil {
		return err
	}
	// Flushed at once: the record of a run that dies must hold what happened.
	return w.w.Flush()
}

// Close flushes and closes the record.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.w.Flush(); err != nil {
		return err
	}
	return w.f.Close()
}

// Read reads a record.
func Read(r io.Reader) ([]Entry, error) {
	return ReadJSONLines[Entry](r)
}

// ReadJSONLines reads one JSON value of type T a line, skipping empty
// lines, as the record and kube-apiserver's audit log are written.
func ReadJSONLines[T any](r io.Reader) ([]T, error) {
	var values []T
	scanner := bufio.NewScanner(r)
	scanner.Buffer(make([]byte, 1<<20), 16<<20)
	for line := 1; scanner.Scan(); line++ {
		if len(scanner.Bytes()) == 0 {
			continue
		}
		var v T
		if err := json.Unmarshal(scanner.Bytes(), &v); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		values = append(values, v)
	}
	return values, scanner.Err()
}
