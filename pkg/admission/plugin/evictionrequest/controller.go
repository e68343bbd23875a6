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

package evictionrequest

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/apis/coordination/validation"
)

// ControllerSubresource is the subresource of evictionrequests whose update
// right is the eviction request controller's: only a caller allowed to
// update evictionrequests/controller changes the fields of a status that
// are the controller's (validation.ControllerStatusChanges). No endpoint
// serves it; it is a right to grant, as certificatesigningrequests/approval
// is for approving a CertificateSigningRequest through its status. The
// controller the server runs writes through the server's loopback client,
// whose identity is in system:masters, which the authorizer allows without
// asking kube-apiserver; a controller run elsewhere needs a rule for it.
const ControllerSubresource = "controller"

// authorizeControllerChanges refuses a status write that changes a field of
// the eviction request controller's unless the caller may update
// evictionrequests/controller: the decision rests on the caller's rights,
// never on a name it writes. Writes that change none of those fields, every
// write of an interceptor, ask nothing.
func (p *Plugin) authorizeControllerChanges(ctx context.Context, a admission.Attributes, newER, oldER *coordination.EvictionRequest) error {
	changes := validation.ControllerStatusChanges(&newER.Status, &oldER.Status, field.NewPath("status"))
	if len(changes) == 0 {
		return nil
	}
	decision, reason, err := p.authorizer.Authorize(ctx, authorizer.AttributesRecord{
		User:            a.GetUserInfo(),
		Verb:            "update",
		Namespace:       a.GetNamespace(),
		APIGroup:        coordination.GroupName,
		APIVersion:      v1alpha1.SchemeGroupVersion.Version,
		Resource:        "evictionrequests",
		Subresource:     ControllerSubresource,
		Name:            a.GetName(),
		ResourceRequest: true,
	})
	if decision == authorizer.DecisionAllow {
		return nil
	}
	fields := make([]string, 0, len(changes))
	causes := make([]metav1.StatusCause, 0, len(changes))
	for _, c := range changes {
		fields = append(fields, fmt.Sprintf("%s (%s)", c.Field, c.Detail))
		causes = append(causes, metav1.StatusCause{Type: metav1.CauseType(c.Type), Field: c.Field, Message: c.ErrorBody()})
	}
	msg := fmt.Sprintf(`user %q may not change %s, which are the eviction request controller's (needs verb "update" on resource "evictionrequests/%s")`,
		a.GetUserInfo().GetName(), strings.Join(fields, ", "), ControllerSubresource)
	if reason != "" {
		msg += ": " + reason
	}
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("%s: authorization failed: %w", msg, err))
	}
	forbidden := admission.NewForbidden(a, errors.New(msg))
	var status *apierrors.StatusError
	if errors.As(forbidden, &status) && status.ErrStatus.Details != nil {
		status.ErrStatus.Details.Causes = causes
	}
	return forbidden
}
