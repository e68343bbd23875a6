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

package localcluster

import (
	"context"
	"fmt"
	"maps"
	"path"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/restmapper"
	"k8s.io/utils/ptr"

	"github.com/evictionrequest/apiserver/artifacts"
	"github.com/evictionrequest/apiserver/pkg/cmd/options"
)

// DefaultOverlay is the overlay of artifacts/ the local control plane
// deploys unless told otherwise. Of the deployed overlay, the RBAC, roles,
// policies and APIService are applied as they are, and the Deployments and
// StatefulSets are run as local processes, the Deployments with the
// arguments and the service accounts they give their containers.
const DefaultOverlay = "default"

// LifecycleOverlay is the overlay a cluster of the lifecycle API deploys:
// evictionrequest-controller and the surge interceptor, no server.
const LifecycleOverlay = "lifecycle"

// BridgeOverlay is the overlay of our API with the eviction API bridge,
// which serves kube-apiserver only; LifecycleBridgeOverlay that of the
// lifecycle API.
const (
	BridgeOverlay          = "bridge"
	LifecycleBridgeOverlay = "lifecycle-bridge"
)

// renderManifests renders the deployed overlay with the cluster's serving
// certificate in place of the one users generate.
func (c *Cluster) renderManifests() error {
	objects, err := artifacts.Render(c.cfg.Overlay, c.CertFiles())
	if err != nil {
		return err
	}
	c.manifests = objects
	return nil
}

// CertFiles are the certificate files the overlays of artifacts/ read, as
// the cluster runs them: its serving certificate of our server and its CA,
// the CA of kube-apiserver's client certificate for the eviction API
// bridge, and the certificates of the etcd the server stores in when the overlay
// runs one.
func (c *Cluster) CertFiles() map[string][]byte {
	files := map[string][]byte{
		path.Join(artifacts.ServingCertDir, "tls.crt"): c.pki.evictionServing.CertPEM,
		path.Join(artifacts.ServingCertDir, "tls.key"): c.pki.evictionServing.KeyPEM,
		path.Join(artifacts.ServingCertDir, "ca.crt"):  c.pki.servingCA.certPEM(),
		// kube-apiserver's client certificate for the eviction API bridge.
		path.Join(artifacts.BridgeClientCertDir, "ca.crt"): c.pki.bridgeClientCA.certPEM(),
	}
	maps.Copy(files, c.pki.etcd.files)
	return files
}

// standsIn is true for the objects of the overlay a local process, or the
// cluster's own wiring, stands in for: the workloads, their volumes, and
// the APIService, applied once the server runs.
func standsIn(obj *unstructured.Unstructured) bool {
	switch obj.GetKind() {
	case "Deployment", "StatefulSet", "PersistentVolumeClaim", "APIService", "ValidatingWebhookConfiguration",
		// The cluster's PKI stands in for cert-manager.
		"Certificate", "Issuer":
		return true
	}
	return false
}

// applyManifests applies the objects of the overlay no local process stands
// in for, namespaces first.
func (c *Cluster) applyManifests(ctx context.Context) error {
	var objects []*unstructured.Unstructured
	for _, obj := range c.manifests {
		if !standsIn(obj) {
			objects = append(objects, obj)
		}
	}
	return c.Apply(ctx, objects, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
}

// Apply applies objects with server-side apply, namespaces first.
func (c *Cluster) Apply(ctx context.Context, objects []*unstructured.Unstructured, opts metav1.ApplyOptions) error {
	sorted := append([]*unstructured.Unstructured(nil), objects...)
	sort.SliceStable(sorted, func(i, j int) bool {
		return sorted[i].GetKind() == "Namespace" && sorted[j].GetKind() != "Namespace"
	})
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(c.Client.Discovery()))
	for _, obj := range sorted {
		gvk := obj.GroupVersionKind()
		mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return fmt.Errorf("%s %s: %w", gvk.Kind, obj.GetName(), err)
		}
		resource := c.Dynamic.Resource(mapping.Resource)
		var client interface {
			Apply(context.Context, string, *unstructured.Unstructured, metav1.ApplyOptions, ...string) (*unstructured.Unstructured, error)
		} = resource
		// As kubectl does, the namespace of a cluster-scoped object is not
		// part of its URL: kustomize sets one on the kinds it does not know
		// the scope of, and kube-apiserver clears it.
		if ns := obj.GetNamespace(); ns != "" && mapping.Scope.Name() == meta.RESTScopeNameNamespace {
			client = resource.Namespace(ns)
		}
		if _, err := client.Apply(ctx, obj.GetName(), obj, opts); err != nil {
			return fmt.Errorf("applying %s %s: %w", gvk.Kind, obj.GetName(), err)
		}
	}
	return nil
}

// manifestsOf returns the rendered objects of kind.
func (c *Cluster) manifestsOf(kind string) []*unstructured.Unstructured {
	var objects []*unstructured.Unstructured
	for _, obj := range c.manifests {
		if obj.GetKind() == kind {
			objects = append(objects, obj.DeepCopy())
		}
	}
	return objects
}

// manifest returns the rendered object of kind and name.
func (c *Cluster) manifest(kind, name string) (*unstructured.Unstructured, error) {
	for _, obj := range c.manifests {
		if obj.GetKind() == kind && obj.GetName() == name {
			return obj.DeepCopy(), nil
		}
	}
	return nil, fmt.Errorf("overlay %s of artifacts/ has no %s %s", c.cfg.Overlay, kind, name)
}

// workload is what a Deployment of the overlay runs: the identity and the
// command line of its first container.
type workload struct {
	namespace, serviceAccount string
	command, args             []string
	replicas                  int
}

// workloadOf reads the Deployment name of the overlay, and checks that it
// runs as the service account the cluster's PKI issued a certificate for.
func (c *Cluster) workloadOf(name, serviceAccount string) (workload, error) {
	obj, err := c.manifest("Deployment", name)
	if err != nil {
		return workload{}, err
	}
	var dep appsv1.Deployment
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &dep); err != nil {
		return workload{}, err
	}
	spec := dep.Spec.Template.Spec
	if spec.ServiceAccountName != serviceAccount || dep.Namespace != serverNamespace {
		return workload{}, fmt.Errorf("the Deployment %s runs as service account %s/%s; the local control plane authenticates it as %s/%s",
			name, dep.Namespace, spec.ServiceAccountName, serverNamespace, serviceAccount)
	}
	if len(spec.Containers) == 0 {
		return workload{}, fmt.Errorf("the Deployment %s has no container", name)
	}
	return workload{namespace: dep.Namespace, serviceAccount: spec.ServiceAccountName,
		command: spec.Containers[0].Command, args: spec.Containers[0].Args,
		replicas: int(ptr.Deref(dep.Spec.Replicas, 1))}, nil
}

// statefulSet is the StatefulSet name of the deployed overlay, nil when it
// has none.
func (c *Cluster) statefulSet(name string) (*appsv1.StatefulSet, error) {
	for _, obj := range c.manifests {
		if obj.GetKind() != "StatefulSet" || obj.GetName() != name {
			continue
		}
		var set appsv1.StatefulSet
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &set); err != nil {
			return nil, err
		}
		return &set, nil
	}
	return nil, nil
}

// localArgs turns the arguments of a container into those of a local
// process: the flags in replace get the local value ("" drops them), the
// others stay as they are.
func localArgs(args []string, replace map[string]string) []string {
	var local []string
	for _, arg := range args {
		name, _, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		value, ok := replace[name]
		switch {
		case !ok:
			local = append(local, arg)
		case value != "":
			local = append(local, "--"+name+"="+value)
		}
	}
	return local
}

// runsController is true when the --controllers arguments among args (a
// second one adds to the first) run the controller name, one off by
// default such as the bridge or the node drain.
func runsController(args []string, name string) bool {
	var controllers []string
	for _, arg := range args {
		if list, ok := strings.CutPrefix(arg, "--controllers="); ok {
			controllers = append(controllers, strings.Split(list, ",")...)
		}
	}
	return options.ControllerEnabled(name, true, controllers)
}

// bridgeArgs are the local values of the eviction API bridge's flags that
// name files: the CA of kube-apiserver's client certificate, and the CA
// the process puts in its webhook's caBundle (the cluster's serving CA:
// the serving certificate is the cluster's too).
func (c *Cluster) bridgeArgs() map[string]string {
	return map[string]string{
		"eviction-bridge-client-ca-file": c.pki.bridgeClientCA.certFile,
		"eviction-bridge-ca-file":        c.pki.servingCA.certFile,
	}
}

// withBridgeCAFile adds --eviction-bridge-ca-file to args that keep a
// webhook's caBundle and do not name it.
func (c *Cluster) withBridgeCAFile(args []string) []string {
	keeps, names := false, false
	for _, arg := range args {
		keeps = keeps || strings.HasPrefix(arg, "--eviction-bridge-webhook-configuration=")
		names = names || strings.HasPrefix(arg, "--eviction-bridge-ca-file=")
	}
	if keeps && !names {
		args = append(args, "--eviction-bridge-ca-file="+c.pki.servingCA.certFile)
	}
	return args
}

// localServiceName names the Service the APIService points at on the local
// control plane, beside the overlay's own Service, which selects no pod here.
const localServiceName = serverName + "-local"

// externalNameService is the Service name the APIService (or a webhook)
// points at: localhost, on port, since loopback addresses are invalid in
// Endpoints.
func externalNameService(name string, port int) *corev1.Service {
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: serverNamespace},
		Spec: corev1.ServiceSpec{
			Type:         corev1.ServiceTypeExternalName,
			ExternalName: "localhost",
			Ports:        []corev1.ServicePort{{Name: "https", Port: int32(port)}},
		},
	}
}
