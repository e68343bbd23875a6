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

package bridge

import (
	"slices"
	"strings"
)

// addCaller adds user to the callers in annotations, the newest last, at
// most maxCallers, comma-separated. A comma or percent sign in a name is
// escaped, so that a name cannot pass for two callers (a forged review's
// "someone,x" would otherwise leave "someone" unmarked).
func addCaller(annotations map[string]string, user string) string {
	names := slices.DeleteFunc(Callers(annotations), func(name string) bool { return name == user })
	names = append(names, user)
	names = names[max(0, len(names)-maxCallers):]
	for i, name := range names {
		names[i] = callerEscaper.Replace(name)
	}
	return strings.Join(names, ",")
}

// callerEscaper and callerUnescaper write and read the names of the
// callers annotation.
var (
	callerEscaper   = strings.NewReplacer("%", "%25", ",", "%2C")
	callerUnescaper = strings.NewReplacer("%25", "%", "%2C", ",")
)

// Callers are the users whose evictions the bridge turned into the request
// annotated with annotations, oldest first (at most five).
func Callers(annotations map[string]string) []string {
	var names []string
	for _, name := range strings.Split(annotations[CallersAnnotation], ",") {
		if name = strings.TrimSpace(name); name != "" {
			names = append(names, callerUnescaper.Replace(name))
		}
	}
	return names
}
