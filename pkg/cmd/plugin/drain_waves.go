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
	"strconv"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// maxConcurrentNodes is how many of the nodes the drain drains at once.
func (d *DrainOptions) maxConcurrentNodes() int {
	n, _ := parseMaxConcurrentNodes(d.MaxConcurrentNodes, len(d.Nodes))
	return n
}

// parseMaxConcurrentNodes reads --max-concurrent-nodes for total nodes: a
// number, or a percentage rounded up; at least one, all when empty.
func parseMaxConcurrentNodes(value string, total int) (int, error) {
	if value == "" {
		return total, nil
	}
	v := intstr.Parse(value)
	n, err := intstr.GetScaledValueFromIntOrPercent(&v, total, true)
	if err != nil || n < 1 || (v.Type == intstr.Int && value != strconv.Itoa(n)) {
		return 0, fmt.Errorf("--max-concurrent-nodes must be a positive number or percentage, got %q", value)
	}
	return min(n, total), nil
}
