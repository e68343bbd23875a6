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

package storage_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination"
)

func TestUpdate(t *testing.T) {
	s := newStorage(t)
	created := s.create(t, newEvictionRequest(1))

	t.Run("spec change bumps the generation and ignores status", func(t *testing.T) {
		er := created.DeepCopy()
		er.Spec.Requesters = append(er.Spec.Requesters, coordination.Requester{Name: "descheduler.example.com"})
		er.Status.Message = "a status write through the main resource"
		updated, err := s.update(er)
		if err != nil {
			t.Fatal(err)
		}
		if updated.Generation != 2 {
			t.Errorf("generation = %d, want 2", updated.Generation)
		}
		if updated.Status.Message != "" {
			t.Errorf("the main resource wrote status.message %q", updated.Status.Message)
		}
		if len(s.get(t, er.Name).Spec.Requesters) != 2 {
			t.Errorf("requester not stored")
		}
	})
	t.Run("immutable fields are refused", func(t *testing.T) {
		er := s.get(t, created.Name)
		er.Spec.Interceptors = nil
		er.Spec.HeartbeatDeadlineSeconds = ptr.To[int32](1200)
		_, err := s.update(er)
		expectInvalid(t, err, "spec.interceptors", "spec.heartbeatDeadlineSeconds")
	})
	t.Run("an update must name a resourceVersion", func(t *testing.T) {
		er := s.get(t, created.Name)
		er.ResourceVersion = ""
		_, err := s.update(er)
		expectInvalid(t, err, "metadata.resourceVersion")
	})
}

func TestStatusUpdate(t *testing.T) {
	s := newStorage(t)
	created := s.create(t, newEvictionRequest(1))

	er := created.DeepCopy()
	er.Spec.Requesters = nil
	er.Status.ActiveInterceptorName = ptr.To("b.example.com")
	er.Status.HeartbeatTime = &metav1.Time{Time: s.clock.Now().Truncate(time.Second)}
	er.Status.EvictionRequestCancellationPolicy = ptr.To(coordination.Forbid)
	updated, err := s.updateStatus(er)
	if err != nil {
		t.Fatal(err)
	}
	if len(updated.Spec.Requesters) != 1 {
		t.Errorf("/status changed the spec: %+v", updated.Spec.Requesters)
	}
	if updated.Generation != 1 {
		t.Errorf("/status changed the generation to %d", updated.Generation)
	}
	stored := s.get(t, er.Name)
	if diff := cmp.Diff(er.Status, stored.Status); diff != "" {
		t.Errorf("stored status (-written +stored):\n%s", diff)
	}

	t.Run("hand-off before the deadline is refused", func(t *testing.T) {
		er := s.get(t, created.Name)
		er.Status.ActiveInterceptorName = ptr.To("a.example.com")
		_, err := s.updateStatus(er)
		expectInvalid(t, err, "status.activeInterceptorName")
	})
	t.Run("hand-off after the deadline is accepted", func(t *testing.T) {
		s.clock.SetTime(s.clock.Now().Add(601 * time.Second))
		er := s.get(t, created.Name)
		er.Status.ActiveInterceptorName = ptr.To("a.example.com")
		er.Status.HeartbeatTime = &metav1.Time{Time: s.clock.Now().Truncate(time.Second)}
		if _, err := s.updateStatus(er); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("the failed eviction counter cannot go down", func(t *testing.T) {
		er := s.get(t, created.Name)
		er.Status.PodEvictionStatus = &coordination.PodEvictionStatus{FailedAPIEvictionCounter: 3}
		er, err := s.updateStatus(er)
		if err != nil {
			t.Fatal(err)
		}
		er.Status.PodEvictionStatus.FailedAPIEvictionCounter = 1
		_, err = s.updateStatus(er)
		expectInvalid(t, err, "status.podEvictionStatus.failedAPIEvictionCounter")
	})
}
