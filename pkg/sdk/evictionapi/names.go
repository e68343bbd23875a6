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

package evictionapi

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
)

// NameRule says what a requester's or responder's name must be on the
// API, for flag help: the rule ValidateName checks.
func (a API) NameRule() string {
	if a == Lifecycle {
		return "a domain-prefixed key outside k8s.io and kubernetes.io"
	}
	return "a DNS subdomain"
}

// ValidateName checks the name of a requester or interceptor as the API's
// server does: a DNS subdomain on coordination.k8s.io (acme.io), a
// domain-prefixed key outside Kubernetes' domains on lifecycle.k8s.io
// (acme.io/drain). Auto, before Discover chose, takes a name of either, and
// refuses one of neither with both reasons.
func (a API) ValidateName(name string) error {
	switch a {
	case Lifecycle:
		return lifecycleutil.ValidateParticipantName(name)
	case Coordination:
		if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
			return errors.New(strings.Join(msgs, "; "))
		}
		return nil
	}
	coordination, lifecycle := Coordination.ValidateName(name), Lifecycle.ValidateName(name)
	if coordination == nil || lifecycle == nil {
		return nil
	}
	return fmt.Errorf("neither a name of coordination.k8s.io (%v) nor one of lifecycle.k8s.io (%v)", coordination, lifecycle)
}
