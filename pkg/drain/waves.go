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

// Waves: a session that drains many nodes drains at most some of them at
// once, in the order it was given them, as a pool upgrade does.

// NodeState is where the drain of one node of a session stands.
type NodeState struct {
	// Started is true once the session requests the node's pods.
	Started bool
	// Left counts its pods that are not done.
	Left int
}

// Done is true for a started node with no pod left.
func (n NodeState) Done() bool {
	return n.Started && n.Left == 0
}

// SetMaxConcurrentNodes limits the session to draining n of its nodes at
// once, in their order: a node's pods are requested once it starts, and the
// next node starts when a started one has no pod left. Zero or less is no
// limit.
func (s *Session) SetMaxConcurrentNodes(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.maxNodes = n
}

// startNodes starts the nodes the limit lets start and returns those whose
// pods a Sync requests. Called with s.mu held.
func (s *Session) startNodes() []string {
	if s.maxNodes <= 0 || s.maxNodes >= len(s.nodes) {
		for _, node := range s.nodes {
			s.started[node] = true
		}
		return s.nodes
	}
	draining := 0
	for _, node := range s.nodes {
		if s.started[node] && s.left[node] > 0 {
			draining++
		}
	}
	var active []string
	for _, node := range s.nodes {
		if !s.started[node] && draining < s.maxNodes {
			s.started[node] = true
			// A node just started counts until a Sync finds it done.
			s.left[node] = 1
			draining++
		}
		if s.started[node] {
			active = append(active, node)
		}
	}
	return active
}

// countLeft records, from progress, the pods left on each started node, and
// returns the state of every node of the session.
func (s *Session) countLeft(progress []PodProgress) map[string]NodeState {
	s.mu.Lock()
	defer s.mu.Unlock()
	left := map[string]int{}
	for _, p := range progress {
		if !p.Done() {
			left[p.Node]++
		}
	}
	states := make(map[string]NodeState, len(s.nodes))
	for _, node := range s.nodes {
		if s.started[node] {
			s.left[node] = left[node]
		}
		states[node] = NodeState{Started: s.started[node], Left: s.left[node]}
	}
	return states
}
