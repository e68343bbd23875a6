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

// The drain's values are flag values (pflag.Value), so that a command
// parses them once, when its flags are parsed, and its options hold what
// they mean: kubectl's Complete / Validate / Run has nothing to parse again.

// Set parses a budget, as ParseNodeBudget does.
func (b *NodeBudget) Set(value string) error {
	parsed, err := ParseNodeBudget(value)
	if err != nil {
		return err
	}
	*b = parsed
	return nil
}

// Type names the flag's value in help.
func (b *NodeBudget) Type() string { return "N|N%" }

// Set parses an escalation, as ParseEscalation does.
func (e *Escalation) Set(value string) error {
	parsed, err := ParseEscalation(value)
	if err != nil {
		return err
	}
	*e = parsed
	return nil
}

// String is the escalation's name; empty for the zero Escalation.
func (e *Escalation) String() string { return string(*e) }

// Type names the flag's value in help.
func (e *Escalation) Type() string { return "fail|evict|delete" }
