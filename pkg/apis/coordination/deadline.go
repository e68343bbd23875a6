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

package coordination

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/evictionrequest/apiserver/pkg/api/heartbeat"
)

// DefaultHeartbeatDeadlineSeconds is the default of
// .spec.heartbeatDeadlineSeconds: 30 minutes, long enough to ride out a
// restart of an interceptor.
const DefaultHeartbeatDeadlineSeconds int32 = 1800

// HeartbeatDeadline returns when the active interceptor's heartbeat deadline
// passes: heartbeatDeadlineSeconds after the last heartbeat, or after the
// creation of the request when no interceptor has sent one yet. The
// arguments are the plain fields so that the internal and the versioned types
// share this one rule.
func HeartbeatDeadline(heartbeatTime *metav1.Time, creationTimestamp metav1.Time, heartbeatDeadlineSeconds *int32) time.Time {
	seconds := DefaultHeartbeatDeadlineSeconds
	if heartbeatDeadlineSeconds != nil {
		seconds = *heartbeatDeadlineSeconds
	}
	return heartbeat.Deadline(heartbeatTime, creationTimestamp, time.Duration(seconds)*time.Second)
}
