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

package lifecycle

import (
	"context"

	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"

	"github.com/evictionrequest/apiserver/pkg/controller/lifecycle/takeover"
)

// ManagersTakenOver are the field managers whose fields the controller
// takes over before it writes an object (takeover): the name an earlier
// release of this controller applied under, which is also
// kube-controller-manager's controller's, whose fields it leaves behind
// when it hands its objects back. The caches of the controller keep their
// managedFields entries.
var ManagersTakenOver = []string{ControllerName}

// takeOverEviction gives the controller the fields ManagersTakenOver hold
// on ev, if any.
func (c *Controller) takeOverEviction(ctx context.Context, ev *lifecyclev1alpha1.Eviction) error {
	return takeover.TakeOver(ctx, ev, ManagersTakenOver, FieldManager,
		takeover.Eviction(c.client.LifecycleV1alpha1(), ev.Namespace, ev.Name, FieldManager, c.callTimeout))
}

// takeOverRequest gives the controller the fields ManagersTakenOver hold
// on er, if any.
func (c *Controller) takeOverRequest(ctx context.Context, er *lifecyclev1alpha1.EvictionRequest) error {
	return takeover.TakeOver(ctx, er, ManagersTakenOver, FieldManager,
		takeover.EvictionRequest(c.client.LifecycleV1alpha1(), er.Namespace, er.Name, FieldManager, c.callTimeout))
}
