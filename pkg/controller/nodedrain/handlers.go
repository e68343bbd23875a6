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

package nodedrain

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	podutil "github.com/evictionrequest/apiserver/pkg/api/v1/pod"
	"github.com/evictionrequest/apiserver/pkg/sdk/participant"
)

func (c *Controller) enqueueNode(obj any) {
	if node, ok := obj.(*corev1.Node); ok {
		c.queue.Add(node.Name)
	}
}

// deleteNode forgets the drain of a node that is gone.
func (c *Controller) deleteNode(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err == nil {
		c.forget(key)
	}
}

// updateNode enqueues a node when something the drain depends on changed:
// kubelets update their nodes every few seconds, almost always with
// nothing the drain reads.
func (c *Controller) updateNode(oldObj, newObj any) {
	oldNode, ok1 := oldObj.(*corev1.Node)
	newNode, ok2 := newObj.(*corev1.Node)
	if !ok1 || !ok2 || c.state(oldNode) != c.state(newNode) {
		c.enqueueNode(newObj)
	}
}

// enqueuePod enqueues the node of a pod, if that node is draining or was.
func (c *Controller) enqueuePod(obj any) {
	if pod, ok := podutil.FromObject(obj); ok {
		c.enqueueNodeOfInterest(pod.Spec.NodeName)
	}
}

// enqueueRequest enqueues the node of the pod an object of the request
// participant reads targets: a change of a request may end or unblock its
// drain.
func (c *Controller) enqueueRequest(obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	ref, uid, ok := participant.Target(obj)
	if !ok {
		return
	}
	pod, err := c.podLister.Pods(ref.Namespace).Get(ref.Name)
	if err == nil && pod.UID == uid {
		c.enqueueNodeOfInterest(pod.Spec.NodeName)
		return
	}
	// The pod is gone: its node's drain waits for the request to complete
	// or to be collected.
	c.enqueueNodesTracking(uid)
}

// enqueueNodesTracking enqueues the nodes whose drain session evicts the pod
// with uid.
func (c *Controller) enqueueNodesTracking(uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for node, session := range c.sessions {
		if session.Tracks(uid) {
			c.queue.Add(node)
		}
	}
}

func (c *Controller) enqueueNodeOfInterest(name string) {
	if name == "" {
		return
	}
	node, err := c.nodeLister.Get(name)
	if err != nil {
		return
	}
	if s := c.state(node); s.wanted() || s.conditions {
		c.queue.Add(name)
	}
}

// nodePods reads the pods of a node from the pod informer's node index.
type nodePods struct {
	indexer cache.Indexer
}

func (n nodePods) OnNode(node string) []*corev1.Pod {
	objs, err := n.indexer.ByIndex(PodNodeNameIndex, node)
	if err != nil {
		return nil
	}
	pods := make([]*corev1.Pod, 0, len(objs))
	for _, obj := range objs {
		if pod, ok := obj.(*corev1.Pod); ok {
			pods = append(pods, pod)
		}
	}
	return pods
}
