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

package policytest

import (
	"context"
	"slices"

	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// Grant is a right of a user, as a ClusterRoleBinding gives it: verb on
// resource (and subresource) of group, in every namespace.
type Grant struct {
	User, Verb, Group, Resource, Subresource string
}

// Grants is an authorizer that allows what its grants allow, and nothing
// else: the policies' authorizer checks ask it.
type Grants []Grant

// Authorizer is the authorizer of g.
func (g Grants) Authorizer() authorizer.Authorizer {
	return authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		asked := Grant{User: a.GetUser().GetName(), Verb: a.GetVerb(), Group: a.GetAPIGroup(), Resource: a.GetResource(), Subresource: a.GetSubresource()}
		if a.IsResourceRequest() && slices.Contains(g, asked) {
			return authorizer.DecisionAllow, "", nil
		}
		return authorizer.DecisionNoOpinion, "", nil
	})
}
