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
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	podutil "github.com/evictionrequest/apiserver/pkg/api/v1/pod"

	"github.com/evictionrequest/apiserver/pkg/bridge/metrics"
	"github.com/evictionrequest/apiserver/pkg/controller"
	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
)

// JanitorName names the janitor's controller and logger.
const JanitorName = "eviction-bridge-janitor"

// UserAgent is the user agent of the bridge's clients, whichever binary
// serves it: its calls are told apart from the controllers' in
// kube-apiserver's logs, audit and metrics.
const UserAgent = "eviction-bridge"

// Janitor ends what the bridge asked for once nobody asks any more: it
// withdraws the bridge from a request no eviction of its pod reached for
// the inactivity time-out, and removes the descheduler's eviction-in-progress
// mark of a pod whose request ended without an eviction. It runs on the
// leader; the bridge itself answers on every replica.
type Janitor struct {
	b        *Bridge
	queue    workqueue.TypedRateLimitingInterface[string]
	handlers controller.Handlers
}

// NewJanitor returns the janitor of b's requests, on b's informers, which
// outlive it: Run or Close removes its handlers.
func NewJanitor(b *Bridge) (*Janitor, error) {
	j := &Janitor{b: b, queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "eviction-bridge", Clock: b.cfg.Clock})}
	for _, informer := range b.informers {
		if err := j.handlers.Add(informer, controller.OnEveryChange(j.enqueue)); err != nil {
			j.handlers.RemoveAll(context.Background())
			return nil, err
		}
	}
	return j, nil
}

// Run runs the janitor until ctx ends.
func (j *Janitor) Run(ctx context.Context) error {
	defer j.handlers.RemoveAll(ctx)
	controller.RunWorkers(ctx, 1, []cache.InformerSynced{j.b.HasSynced},
		controller.Worker{Queue: j.queue, Sync: j.sync, Kind: "EvictionRequest of the eviction bridge"})
	return nil
}

// Close removes the janitor's handlers, for a janitor that will not run.
func (j *Janitor) Close(ctx context.Context) {
	j.handlers.RemoveAll(ctx)
	j.queue.ShutDown()
}

// enqueue wakes the pod an object of the participant's informers targets.
func (j *Janitor) enqueue(obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	if ref, uid, ok := participant.Target(obj); ok {
		j.queue.Add(ref.Namespace + "/" + ref.Name + "/" + string(uid))
	}
}

// sync withdraws the bridge from the request of the pod key when its last
// recorded call is older than withdrawalAge, and looks again when it will
// be; once the bridge no longer requests the eviction of a pod that stays,
// it removes the descheduler's mark.
func (j *Janitor) sync(ctx context.Context, key string) (time.Duration, error) {
	namespace, name, uid, ok := splitKey(key)
	if !ok {
		return 0, nil
	}
	status, err := j.b.cfg.Participant.Status(ctx, namespace, uid)
	if err != nil {
		return 0, err
	}
	pod, err := j.b.cfg.Pods.Pods(namespace).Get(name)
	if apierrors.IsNotFound(err) || (err == nil && pod.UID != uid) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if !status.Requested || status.Complete {
		if _, marked := pod.Annotations[EvictionInProgressAnnotation]; marked && !podutil.IsTerminating(pod) {
			return 0, j.b.markInProgress(ctx, pod, nil)
		}
		return 0, nil
	}
	if _, background := pod.Annotations[RequestEvictOnlyAnnotation]; background {
		// The descheduler asked for an eviction in the background and does
		// not call again: the request stays until it ends.
		return 0, nil
	}
	last := lastCall(status)
	if idle, age := j.b.cfg.Clock.Now().Sub(last), withdrawalAge(j.b.cfg.Inactivity); idle < age {
		return age - idle, nil
	}
	switch w, err := j.b.cfg.Participant.Withdraw(ctx, namespace, uid); {
	case w == participant.WithdrawalForbidden:
		// The interceptor forbids it now: look again later.
		return j.b.cfg.Inactivity, nil
	case err != nil:
		return 0, err
	case w == participant.Withdrawn:
		metrics.Withdrawals.Inc()
		klog.FromContext(ctx).V(2).Info("Withdrew from the eviction of a pod no eviction call reached for the inactivity time-out",
			"pod", klog.KObj(pod), "lastCall", last, "inactivity", j.b.cfg.Inactivity)
	}
	return 0, nil
}

// lastCall is when an eviction of the pod last reached the bridge, as the
// janitor judges it: the time the bridge wrote with its request
// (LastCallAnnotation), but never later than the server's record of the
// bridge's last write of it, so that a time in the future, which anyone
// who may patch the request can write, does not keep it for ever. A
// request without the annotation (written by an older release, whose
// second write failed, or stripped of it) counts from the server's record
// alone: the bridge's last write, else the request's creation.
func lastCall(s participant.Status) time.Time {
	server := s.Created
	if s.Written != nil && s.Written.After(server) {
		server = *s.Written
	}
	recorded, err := time.Parse(time.RFC3339, s.Annotations[LastCallAnnotation])
	if err != nil || (s.Written != nil && recorded.After(*s.Written)) {
		return server
	}
	return recorded
}

func splitKey(key string) (namespace, name string, uid types.UID, ok bool) {
	parts := strings.SplitN(key, "/", 3)
	if len(parts) != 3 {
		return "", "", "", false
	}
	return parts[0], parts[1], types.UID(parts[2]), true
}
