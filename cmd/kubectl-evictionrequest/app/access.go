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

package app

import (
	"context"
	"fmt"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// permission is one thing a command needs to be allowed to do, and why.
type permission struct {
	verb, group, resource, subresource, namespace string
	why                                           string
}

func (p permission) String() string {
	resource := p.resource
	if p.group != "" {
		resource += "." + p.group
	}
	if p.subresource != "" {
		resource += "/" + p.subresource
	}
	where := "in all namespaces"
	switch {
	case p.namespace != "":
		where = "in namespace " + p.namespace
	case p.resource == "nodes":
		where = ""
	}
	return strings.TrimSpace(fmt.Sprintf("%s %s %s", p.verb, resource, where)) + " (" + p.why + ")"
}

// requesterPermissions are what the plugin's requester needs in a
// namespace: to read and write EvictionRequests (server-side apply is a
// patch) and, on coordination.k8s.io, to delete the pod, which
// evictionrequest-apiserver requires of every writer of a request.
func (o *Options) requesterPermissions(namespace, why string) []permission {
	perms := []permission{
		{verb: "get", group: o.api().Group(), resource: "evictionrequests", namespace: namespace, why: why},
		{verb: "patch", group: o.api().Group(), resource: "evictionrequests", namespace: namespace, why: why},
	}
	if o.api().WriterMustDeletePod() {
		perms = append(perms, permission{verb: "delete", resource: "pods", namespace: namespace, why: why + "; the server requires it of whoever asks for a pod's eviction"})
	}
	return perms
}

// checkAccess asks kube-apiserver, before anything changes, whether the
// user may do everything the command needs, and names what is missing.
func (o *Options) checkAccess(ctx context.Context, perms []permission) error {
	seen := map[permission]bool{}
	var denied []string
	for _, p := range perms {
		key := p
		key.why = ""
		if seen[key] {
			continue
		}
		seen[key] = true
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: p.namespace, Verb: p.verb, Group: p.group, Resource: p.resource, Subresource: p.subresource,
			},
		}}
		callCtx, cancel := o.call(ctx)
		result, err := o.kube.AuthorizationV1().SelfSubjectAccessReviews().Create(callCtx, review, metav1.CreateOptions{})
		cancel()
		if err != nil {
			return fmt.Errorf("checking whether you may %s: %w", p, err)
		}
		if !result.Status.Allowed {
			denied = append(denied, p.String())
		}
	}
	if len(denied) > 0 {
		return fmt.Errorf("you are not allowed to:\n  - %s\nnothing was changed", strings.Join(denied, "\n  - "))
	}
	return nil
}
