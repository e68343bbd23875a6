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

package main

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/pkg/apis/coordination/v1alpha1"
	coordinationapply "github.com/evictionrequest/apiserver/pkg/generated/applyconfiguration/coordination/v1alpha1"
	clientset "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned"
	evictionrequests "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned/typed/coordination/v1alpha1"
)

// Content types the load generator can speak to our API: protobuf, as the
// generated clientset (and so the SDK's interceptors and requesters) does,
// or JSON, as kubectl does. The CRD speaks only JSON.
const (
	protobufContent = "protobuf"
	jsonContent     = "json"
)

// requests is what the load generator does with the EvictionRequests of one
// API in the benchmark's namespace, as one user.
type requests interface {
	// create creates the request of the benchmark's i-th pod.
	create(ctx context.Context, i int) error
	// patchStatus merge-patches the status of the request name.
	patchStatus(ctx context.Context, name string, patch []byte) error
	// join has the second requester add itself to the i-th pod's request
	// with server-side apply.
	join(ctx context.Context, i int) error
	// list lists the requests and returns how many there are and the
	// resourceVersion of the list.
	list(ctx context.Context, opts metav1.ListOptions) (int, string, error)
	// watch watches the requests.
	watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
	// deleteAll deletes the collection of the requests.
	deleteAll(ctx context.Context) error
}

// newRequests returns the requests of t as the user of config: typed and in
// protobuf for ours unless contentType is JSON, unstructured and in JSON
// otherwise.
func (b *bench) newRequests(t target, config *rest.Config, contentType string) (requests, error) {
	if t.ours && contentType == protobufContent {
		c, err := clientset.NewForConfig(config)
		if err != nil {
			return nil, err
		}
		return typedRequests{b: b, client: c.CoordinationV1alpha1().EvictionRequests(namespace)}, nil
	}
	c, err := dynamic.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	return dynamicRequests{b: b, t: t, client: c.Resource(t.gvr).Namespace(namespace)}, nil
}

// typedRequests speaks to our API with the generated clientset.
type typedRequests struct {
	b      *bench
	client evictionrequests.EvictionRequestInterface
}

func (r typedRequests) create(ctx context.Context, i int) error {
	p := r.b.pods[i]
	_, err := r.client.Create(ctx, &v1alpha1.EvictionRequest{
		ObjectMeta: metav1.ObjectMeta{Name: p.uid},
		Spec: v1alpha1.EvictionRequestSpec{
			Target:     v1alpha1.EvictionTarget{PodRef: &v1alpha1.LocalPodReference{Name: p.name, UID: p.uid}},
			Requesters: []v1alpha1.Requester{{Name: requesterName}},
		},
	}, metav1.CreateOptions{})
	return err
}

func (r typedRequests) patchStatus(ctx context.Context, name string, patch []byte) error {
	_, err := r.client.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	return err
}

func (r typedRequests) join(ctx context.Context, i int) error {
	apply := coordinationapply.EvictionRequest(r.b.pods[i].uid, namespace).
		WithSpec(coordinationapply.EvictionRequestSpec().WithRequesters(coordinationapply.Requester().WithName(secondRequesterName)))
	_, err := r.client.Apply(ctx, apply, metav1.ApplyOptions{FieldManager: secondRequesterName})
	return err
}

func (r typedRequests) list(ctx context.Context, opts metav1.ListOptions) (int, string, error) {
	list, err := r.client.List(ctx, opts)
	if err != nil {
		return 0, "", err
	}
	return len(list.Items), list.ResourceVersion, nil
}

func (r typedRequests) watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return r.client.Watch(ctx, opts)
}

func (r typedRequests) deleteAll(ctx context.Context) error {
	return ignoreNotFound(r.client.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}))
}

// dynamicRequests speaks JSON with the dynamic client, as kubectl does.
type dynamicRequests struct {
	b      *bench
	t      target
	client dynamic.ResourceInterface
}

func (r dynamicRequests) create(ctx context.Context, i int) error {
	p := r.b.pods[i]
	spec := map[string]any{
		"target":     map[string]any{"podRef": map[string]any{"name": p.name, "uid": p.uid}},
		"requesters": []any{map[string]any{"name": requesterName}},
	}
	// The CRD is given the interceptors our admission copies from the pod,
	// so that both store the same object.
	if !r.t.ours {
		spec["interceptors"] = []any{map[string]any{"name": interceptorName}}
	}
	_, err := r.client.Create(ctx, r.object(p.uid, spec), metav1.CreateOptions{})
	return err
}

func (r dynamicRequests) patchStatus(ctx context.Context, name string, patch []byte) error {
	_, err := r.client.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	return err
}

func (r dynamicRequests) join(ctx context.Context, i int) error {
	name := r.b.pods[i].uid
	spec := map[string]any{"requesters": []any{map[string]any{"name": secondRequesterName}}}
	_, err := r.client.Apply(ctx, name, r.object(name, spec), metav1.ApplyOptions{FieldManager: secondRequesterName})
	return err
}

func (r dynamicRequests) object(name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": r.t.gvr.GroupVersion().String(),
		"kind":       "EvictionRequest",
		"metadata":   map[string]any{"name": name, "namespace": namespace},
		"spec":       spec,
	}}
}

func (r dynamicRequests) list(ctx context.Context, opts metav1.ListOptions) (int, string, error) {
	list, err := r.client.List(ctx, opts)
	if err != nil {
		return 0, "", err
	}
	return len(list.Items), list.GetResourceVersion(), nil
}

func (r dynamicRequests) watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return r.client.Watch(ctx, opts)
}

func (r dynamicRequests) deleteAll(ctx context.Context) error {
	return ignoreNotFound(r.client.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}))
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// activeInterceptor returns the name and active interceptor of a request
// as either client decodes it.
func activeInterceptor(obj runtime.Object) (name, active string, err error) {
	switch er := obj.(type) {
	case *v1alpha1.EvictionRequest:
		return er.Name, ptr.Deref(er.Status.ActiveInterceptorName, ""), nil
	case *unstructured.Unstructured:
		active, _, _ := unstructured.NestedString(er.Object, "status", "activeInterceptorName")
		return er.GetName(), active, nil
	}
	return "", "", fmt.Errorf("unexpected %T", obj)
}
