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
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// NodeBudget is how many nodes of a set may drain at once: a number, or a
// percentage of the set's nodes rounded up, as a Deployment's maxSurge is.
// The zero NodeBudget sets no limit.
type NodeBudget struct {
	value *intstr.IntOrString
}

// ParseNodeBudget reads a budget written as a positive number ("3") or
// percentage ("25%"); empty is no limit.
func ParseNodeBudget(value string) (NodeBudget, error) {
	if value == "" {
		return NodeBudget{}, nil
	}
	v := intstr.Parse(value)
	// 100 nodes tell a percentage that rounds up to nothing (0%) from one
	// that always leaves one node to drain.
	n, err := intstr.GetScaledValueFromIntOrPercent(&v, 100, true)
	if err != nil || n < 1 || (v.Type == intstr.Int && value != strconv.Itoa(n)) {
		return NodeBudget{}, fmt.Errorf("must be a positive number or percentage, got %q", value)
	}
	return NodeBudget{value: &v}, nil
}

// IsSet is false for the zero NodeBudget, which sets no limit.
func (b NodeBudget) IsSet() bool {
	return b.value != nil
}

// Of is how many of total nodes may drain at once: at least one, at most
// total; total when no limit is set, and none of none.
func (b NodeBudget) Of(total int) int {
	if b.value == nil || total <= 0 {
		return total
	}
	n, _ := intstr.GetScaledValueFromIntOrPercent(b.value, total, true)
	return max(min(n, total), 1)
}

// String is the budget as it was written; empty when none is set.
func (b NodeBudget) String() string {
	if b.value == nil {
		return ""
	}
	return b.value.String()
}
