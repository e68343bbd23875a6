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

// Command faultcheck checks the invariants of a drain under faults on the
// history a fault campaign recorded (make bench-faults): the campaign's
// record and kube-apiserver's audit log. It prints a table of the
// invariants and every violation, and exits 1 on any violation.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/evictionrequest/apiserver/internal/faults/check"
	"github.com/evictionrequest/apiserver/internal/faults/history"
)

func main() {
	record := flag.String("record", "", "the campaign's record (JSON lines)")
	audit := flag.String("audit", "", "kube-apiserver's audit log")
	silent := flag.String("silent-participants", "", "comma-separated participants that never answer (our API's interceptors, lifecycle.k8s.io's responders)")
	maxWrites := flag.Int("max-writes-per-request", 0, "writes one EvictionRequest or Eviction may see before it counts as a write loop (0: the default, 60)")
	flag.Parse()
	if err := run(*record, *audit, *silent, *maxWrites); err != nil {
		fmt.Fprintln(os.Stderr, "faultcheck:", err)
		os.Exit(2)
	}
}

func run(recordPath, auditPath, silent string, maxWrites int) error {
	if recordPath == "" || auditPath == "" {
		return fmt.Errorf("--record and --audit are required")
	}
	f, err := os.Open(recordPath)
	if err != nil {
		return err
	}
	defer f.Close()
	entries, err := history.Read(f)
	if err != nil {
		return fmt.Errorf("%s: %w", recordPath, err)
	}
	a, err := os.Open(auditPath)
	if err != nil {
		return err
	}
	defer a.Close()
	events, err := check.ReadAudit(a)
	if err != nil {
		return fmt.Errorf("%s: %w", auditPath, err)
	}
	opts := check.Options{MaxWritesPerRequest: maxWrites}
	if silent != "" {
		opts.SilentParticipants = strings.Split(silent, ",")
	}
	report, err := check.Check(entries, events, opts)
	if err != nil {
		return err
	}
	if err := report.Print(os.Stdout); err != nil {
		return err
	}
	if n := report.Violations(); n > 0 {
		fmt.Printf("%d violations\n", n)
		os.Exit(1)
	}
	return nil
}
