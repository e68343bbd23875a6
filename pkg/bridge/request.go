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
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
)

// request asks for the pod's eviction as the bridge, records who asked
// through the Eviction API, and marks a pod the descheduler evicts in the
// background.
func (b *Bridge) request(ctx context.Context, pod *corev1.Pod, e Eviction) (participant.Status, error) {
	status, err := b.cfg.Participant.Request(ctx, pod)
	if err != nil {
		return participant.Status{}, fmt.Errorf("requesting the eviction of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	klog.FromContext(ctx).V(2).Info("Requested the eviction of a pod evicted through the Eviction API", "pod", klog.KObj(pod), "user", e.User,
		"authenticated", e.Authenticated, "request", status.Request)
	b.cfg.Recorder.Event(b.requestRef(pod, status), corev1.EventTypeNormal, EventRequestedThroughEvictionAPI, RequestedMessage(e))
	if err := b.cfg.Participant.Annotate(ctx, pod.Namespace, pod.UID, map[string]*string{
		LastCallAnnotation: ptr.To(b.cfg.Clock.Now().UTC().Format(time.RFC3339)),
		CallersAnnotation:  ptr.To(addCaller(status.Annotations, e.Caller())),
	}); err != nil {
		return participant.Status{}, fmt.Errorf("annotating the EvictionRequest of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	if _, ok := pod.Annotations[RequestEvictOnlyAnnotation]; ok {
		if err := b.markInProgress(ctx, pod, ptr.To("")); err != nil {
			return participant.Status{}, err
		}
	}
	return status, nil
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

// touch records that an eviction of the pod reached the bridge again, at
// most a few times per inactivity time-out, so that a client retrying every
// few seconds costs one write a minute or so.
func (b *Bridge) touch(ctx context.Context, pod *corev1.Pod, status participant.Status, e Eviction) {
	if e.DryRun {
		return
	}
	now := b.cfg.Clock.Now()
	last, err := time.Parse(time.RFC3339, status.Annotations[LastCallAnnotation])
	callers := addCaller(status.Annotations, e.Caller())
	if err == nil && now.Sub(last) < b.cfg.Inactivity/4 && callers == status.Annotations[CallersAnnotation] {
		return
	}
	if err := b.cfg.Participant.Annotate(ctx, pod.Namespace, pod.UID, map[string]*string{
		LastCallAnnotation: ptr.To(now.UTC().Format(time.RFC3339)),
		CallersAnnotation:  ptr.To(callers),
	}); err != nil {
		// The refusal stands; the next call writes it.
		klog.FromContext(ctx).Error(err, "Recording an eviction call", "pod", klog.KObj(pod))
	}
}

// markInProgress sets (value non-nil) or removes the descheduler's
// eviction-in-progress annotation of pod.
func (b *Bridge) markInProgress(ctx context.Context, pod *corev1.Pod, value *string) error {
	return annotatePod(ctx, b.cfg.Kube, b.cfg.CallTimeout, pod, EvictionInProgressAnnotation, value)
}

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
