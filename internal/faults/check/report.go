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
	"text/tabwriter"
)

// Print writes the report as a table, each violation under its invariant.
func (r Report) Print(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "INVARIANT\tCHECKED\tINCONCLUSIVE\tVIOLATIONS")
	for _, res := range r.Results {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\n", res.Invariant, res.Checked, res.Inconclusive, len(res.Violations))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, res := range r.Results {
		for _, v := range res.Violations {
			if _, err := fmt.Fprintf(w, "VIOLATION %s: %s\n", res.Invariant, v); err != nil {
				return err
			}
		}
	}
	return nil
}
