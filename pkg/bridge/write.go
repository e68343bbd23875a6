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
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// write carries out pl, the decision on the eviction o read, and returns
// the answer: pl's, or the refusal that names the write that failed. No
// write follows one that failed.
func (b *Bridge) write(ctx context.Context, o observation, pl plan) Decision {
	logger, pod, p := klog.FromContext(ctx), o.pod, b.policy()
	switch {
	case pl.request:
		status, err := b.cfg.Participant.Request(ctx, pod, pl.annotations)
		if err != nil {
			logger.Error(err, "Refused an eviction: the EvictionRequest of its pod could not be written", "pod", klog.KObj(pod), "user", o.eviction.User)
			return requestFailed(p, pod, o.status, err)
		}
		logger.V(2).Info("Requested the eviction of a pod evicted through the Eviction API", "pod", klog.KObj(pod), "user", o.eviction.User,
			"authenticated", o.eviction.Authenticated, "request", status.Request)
		b.cfg.Recorder.Event(p.api.RequestReference(pod.Namespace, status.Request), corev1.EventTypeNormal,
			EventRequestedThroughEvictionAPI, RequestedMessage(o.eviction))
	case pl.recordCall:
		b.recordCall(ctx, pod, pl.annotations)
	}
	if pl.markPod {
		if err := b.markInProgress(ctx, pod, ptr.To("")); err != nil {
			logger.Error(err, "Refused an eviction: its pod could not be marked for the descheduler", "pod", klog.KObj(pod))
			return markFailed(p, pod, o.status, err)
		}
	}
	return pl.Decision
}

// RequestedMessage is the message of the event that records who asked for
// the eviction through the Eviction API: the user kube-apiserver
// authenticated, or, when the review did not prove it came from
// kube-apiserver, the name it claimed, said to be unverified.
func RequestedMessage(e Eviction) string {
	if e.Authenticated {
		return fmt.Sprintf("Requested through the eviction API by %s.", e.User)
	}
	return fmt.Sprintf("Requested through the eviction API by %s, as an unauthenticated review claimed: the bridge does not verify that its callers are kube-apiserver.", e.User)
}

// markInProgress sets (value non-nil) or removes the descheduler's
// eviction-in-progress annotation of pod.
func (b *Bridge) markInProgress(ctx context.Context, pod *corev1.Pod, value *string) error {
	return annotatePod(ctx, b.cfg.Kube, b.cfg.CallTimeout, pod, EvictionInProgressAnnotation, value)
}

// annotatePod merge-patches one annotation of pod (nil removes it),
// guarded by its UID.
func annotatePod(ctx context.Context, kube kubernetes.Interface, timeout time.Duration, pod *corev1.Pod, key string, value *string) error {
	patch := fmt.Sprintf(`{"metadata":{"uid":%q,"annotations":{%q:%s}}}`, pod.UID, key, jsonString(value))
	callCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_, err := kube.CoreV1().Pods(pod.Namespace).Patch(callCtx, pod.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("annotating pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return nil
}

func jsonString(s *string) string {
	if s == nil {
		return "null"
	}
	return fmt.Sprintf("%q", *s)
}

// recordCall writes down a known caller's call in the background, one
// write per pod at a time, each bounded by the participant's call timeout.
// The refusal does not depend on it (the request exists; a write that
// fails is made by a later call), and an answer that waited for the write
// on a loaded control plane came after kube-apiserver's webhook timeout:
// the webhook failed open and the protected pod was evicted.
func (b *Bridge) recordCall(ctx context.Context, pod *corev1.Pod, annotations map[string]string) {
	if _, busy := b.recording.LoadOrStore(pod.UID, struct{}{}); busy {
		return
	}
	ctx = context.WithoutCancel(ctx)
	go func() {
		defer b.recording.Delete(pod.UID)
		if _, err := b.cfg.Participant.Request(ctx, pod, annotations); err != nil {
			klog.FromContext(ctx).Error(err, "Recording an eviction call", "pod", klog.KObj(pod))
		}
	}()
}
