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
	"fmt"
	"strings"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination"
)

// maxListedNames bounds how many requesters a table cell lists before it
// only counts the rest, so that a request with many requesters stays one line.
const maxListedNames = 3

var columns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: "Name of the EvictionRequest, the UID of its pod."},
	{Name: "Pod", Type: "string", Description: "Name of the pod to evict (spec.target.podRef.name)."},
	{Name: "Requesters", Type: "string", Description: "Requesters asking for the eviction (spec.requesters)."},
	{Name: "Active Interceptor", Type: "string", Description: "Interceptor currently handling the eviction (status.activeInterceptorName)."},
	{Name: "Complete", Type: "string", Description: "Status of the Complete condition."},
	{Name: "Failed Evictions", Type: "integer", Description: "Failed API-initiated evictions (status.podEvictionStatus.failedAPIEvictionCounter)."},
	{Name: "Age", Type: "string", Description: "Time since the EvictionRequest was created."},
	{Name: "Interceptors", Type: "string", Priority: 1, Description: "Interceptors in selection order, highest index first (spec.interceptors)."},
	{Name: "Cancellation", Type: "string", Priority: 1, Description: "Cancellation policy (status.evictionRequestCancellationPolicy)."},
	{Name: "Heartbeat", Type: "string", Priority: 1, Description: "Time since the active interceptor's last heartbeat (status.heartbeatTime)."},
	{Name: "Message", Type: "string", Priority: 1, Description: "Human readable progress (status.message)."},
}

// TableConvertor prints EvictionRequests for kubectl get.
type TableConvertor struct{}

var _ rest.TableConvertor = TableConvertor{}

// ConvertToTable converts an EvictionRequest or a list of them to a table.
func (TableConvertor) ConvertToTable(ctx context.Context, obj runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	table := &metav1.Table{}
	if opts, ok := tableOptions.(*metav1.TableOptions); !ok || !opts.NoHeaders {
		table.ColumnDefinitions = columns
	}
	now := time.Now()
	switch t := obj.(type) {
	case *coordination.EvictionRequest:
		table.ResourceVersion = t.ResourceVersion
		table.Rows = []metav1.TableRow{tableRow(t, now)}
	case *coordination.EvictionRequestList:
		table.ResourceVersion, table.Continue, table.RemainingItemCount = t.ResourceVersion, t.Continue, t.RemainingItemCount
		table.Rows = make([]metav1.TableRow, 0, len(t.Items))
		for i := range t.Items {
			table.Rows = append(table.Rows, tableRow(&t.Items[i], now))
		}
	default:
		return nil, fmt.Errorf("cannot print %T as an EvictionRequest table", obj)
	}
	return table, nil
}

func tableRow(er *coordination.EvictionRequest, now time.Time) metav1.TableRow {
	var pod string
	if er.Spec.Target.PodRef != nil {
		pod = er.Spec.Target.PodRef.Name
	}
	requesters := make([]string, 0, len(er.Spec.Requesters))
	for _, r := range er.Spec.Requesters {
		requesters = append(requesters, r.Name)
	}
	interceptors := make([]string, 0, len(er.Spec.Interceptors))
	for i := len(er.Spec.Interceptors) - 1; i >= 0; i-- {
		interceptors = append(interceptors, er.Spec.Interceptors[i].Name)
	}
	active := "<none>"
	if er.Status.ActiveInterceptorName != nil {
		active = *er.Status.ActiveInterceptorName
	}
	complete := string(metav1.ConditionFalse)
	if c := apimeta.FindStatusCondition(er.Status.Conditions, string(coordination.EvictionRequestComplete)); c != nil {
		complete = string(c.Status)
	}
	var failed int64
	if er.Status.PodEvictionStatus != nil {
		failed = int64(er.Status.PodEvictionStatus.FailedAPIEvictionCounter)
	}
	policy := "<unset>"
	if er.Status.EvictionRequestCancellationPolicy != nil {
		policy = string(*er.Status.EvictionRequestCancellationPolicy)
	}
	heartbeat := "<none>"
	if er.Status.HeartbeatTime != nil {
		heartbeat = since(er.Status.HeartbeatTime.Time, now)
	}
	return metav1.TableRow{
		Object: runtime.RawExtension{Object: er},
		Cells: []interface{}{
			er.Name, pod, joinNames(requesters), active, complete, failed, since(er.CreationTimestamp.Time, now),
			joinNames(interceptors), policy, heartbeat, er.Status.Message,
		},
	}
}

// joinNames lists the first maxListedNames names and counts the others.
func joinNames(names []string) string {
	switch {
	case len(names) == 0:
		return "<none>"
	case len(names) > maxListedNames:
		return fmt.Sprintf("%s + %d more", strings.Join(names[:maxListedNames], ","), len(names)-maxListedNames)
	default:
		return strings.Join(names, ",")
	}
}

func since(t, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t))
}
