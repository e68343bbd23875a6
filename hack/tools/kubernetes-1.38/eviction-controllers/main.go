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

// Command eviction-controllers runs Kubernetes v1.38.0-beta.0's
// evictionrequest-controller and imperative-eviction-responder-controller
// exactly as kube-controller-manager runs them with its EvictionRequestAPI
// gate on (cmd/kube-controller-manager/app/lifecycle.go): the same
// constructors, informers, names (which are their field managers), worker
// flags and defaults, and kube-controller-manager's client limits. The local
// control plane runs it in place of evictionrequest-controller's own two
// (local-up --lifecycle-controllers=upstream), so that every actor of the
// project is tested on upstream's code. One process: no leader election.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/component-base/metrics/legacyregistry"
	// The workqueue metrics, as kube-controller-manager registers them.
	_ "k8s.io/component-base/metrics/prometheus/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/controller/evictionrequest"
	"k8s.io/kubernetes/pkg/controller/imperativeevictionresponder"
)

// The controllers' names in kube-controller-manager
// (cmd/kube-controller-manager/names).
const (
	evictionRequestController   = "evictionrequest-controller"
	imperativeEvictionResponder = "imperative-eviction-responder-controller"
)

// options are kube-controller-manager's flags for the two controllers, with
// its defaults.
type options struct {
	kubeconfig              string
	controllers             string
	evictionRequestSyncs    int
	imperativeEvictionSyncs int
	qps                     float64
	burst                   int
	resync                  time.Duration
	metricsBindAddress      string
}

func main() {
	var o options
	klog.InitFlags(nil)
	flag.StringVar(&o.kubeconfig, "kubeconfig", "", "Kubeconfig of kube-apiserver; in-cluster when empty.")
	flag.StringVar(&o.controllers, "controllers", "*",
		"Controllers to run, as kube-controller-manager's --controllers: '*', "+evictionRequestController+", "+imperativeEvictionResponder+", '-name' to leave one out.")
	flag.IntVar(&o.evictionRequestSyncs, "concurrent-eviction-request-syncs", 5, "Workers of evictionrequest-controller (kube-controller-manager's flag and default).")
	flag.IntVar(&o.imperativeEvictionSyncs, "concurrent-imperative-eviction-responder-syncs", 5,
		"Workers of imperative-eviction-responder-controller (kube-controller-manager's flag and default).")
	flag.Float64Var(&o.qps, "kube-api-qps", 20, "Requests per second to kube-apiserver (kube-controller-manager's default).")
	flag.IntVar(&o.burst, "kube-api-burst", 30, "Burst of requests to kube-apiserver (kube-controller-manager's default).")
	flag.DurationVar(&o.resync, "min-resync-period", 12*time.Hour, "Resync period of the informers (kube-controller-manager's default).")
	flag.StringVar(&o.metricsBindAddress, "metrics-bind-address", "",
		"Address of /metrics (the controllers' workqueue metrics, as kube-controller-manager reports them) and /healthz, which answers ok once the caches synced; none when empty.")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		klog.Background().Error(err, "eviction-controllers failed")
		os.Exit(1)
	}
}

// run runs the enabled controllers until ctx ends, then stops the
// informers and waits for the controllers.
func run(ctx context.Context, o options) error {
	config, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		return err
	}
	config.QPS, config.Burst = float32(o.qps), o.burst
	// kube-controller-manager's clients speak protobuf.
	config.ContentType = "application/vnd.kubernetes.protobuf"
	// kube-controller-manager gives each controller a client of its own,
	// under its name (--use-service-account-credentials aside).
	client := func(name string) (kubernetes.Interface, error) {
		return kubernetes.NewForConfig(rest.AddUserAgent(rest.CopyConfig(config), "kube-controller-manager/"+name))
	}
	shared, err := client("shared-informers")
	if err != nil {
		return err
	}
	// kube-controller-manager's informers hold no managedFields, which no
	// controller reads.
	factory := informers.NewSharedInformerFactoryWithOptions(shared, o.resync, informers.WithTransform(dropManagedFields))
	lifecycle := factory.Lifecycle().V1alpha1()
	var runs []func(context.Context)
	if enabled(o.controllers, evictionRequestController) {
		c, err := client(evictionRequestController)
		if err != nil {
			return err
		}
		controller, err := evictionrequest.NewController(ctx, evictionRequestController, lifecycle.Evictions(), lifecycle.EvictionRequests(), factory.Core().V1().Pods(), c)
		if err != nil {
			return fmt.Errorf("%s: %w", evictionRequestController, err)
		}
		runs = append(runs, func(ctx context.Context) { controller.Run(ctx, o.evictionRequestSyncs) })
	}
	if enabled(o.controllers, imperativeEvictionResponder) {
		c, err := client(imperativeEvictionResponder)
		if err != nil {
			return err
		}
		controller, err := imperativeevictionresponder.NewController(ctx, imperativeEvictionResponder, lifecycle.Evictions(), factory.Core().V1().Pods(), c)
		if err != nil {
			return fmt.Errorf("%s: %w", imperativeEvictionResponder, err)
		}
		runs = append(runs, func(ctx context.Context) { controller.Run(ctx, o.imperativeEvictionSyncs) })
	}
	factory.Start(ctx.Done())
	var synced atomic.Bool
	if err := serve(ctx, o.metricsBindAddress, &synced); err != nil {
		return err
	}
	for informer, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("the cache of %v did not sync", informer)
		}
	}
	synced.Store(true)
	klog.FromContext(ctx).Info("Running Kubernetes' eviction request controllers", "controllers", o.controllers)
	var wg sync.WaitGroup
	for _, r := range runs {
		wg.Go(func() { r(ctx) })
	}
	wg.Wait()
	factory.Shutdown()
	return nil
}

// dropManagedFields is a cache transform that drops metadata.managedFields.
func dropManagedFields(obj any) (any, error) {
	if accessor, err := meta.Accessor(obj); err == nil {
		accessor.SetManagedFields(nil)
	}
	return obj, nil
}

// serve serves /metrics and /healthz on address until ctx ends; /healthz
// answers ok once synced is true.
func serve(ctx context.Context, address string, synced *atomic.Bool) error {
	if address == "" {
		return nil
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", legacyregistry.Handler())
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		if !synced.Load() {
			http.Error(w, "caches not synced", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	listener, err := net.Listen("tcp", address)
	if err != nil {
		return err
	}
	server := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = server.Serve(listener) }()
	go func() {
		<-ctx.Done()
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = server.Shutdown(shutdownCtx)
	}()
	return nil
}

// enabled reads kube-controller-manager's --controllers syntax as its
// IsControllerEnabled (k8s.io/controller-manager/app) does, for the two
// controllers it runs on by default: the first of 'name' and '-name'
// decides, '*' runs it otherwise. That package is not imported for ten
// lines: it would add its server's packages to the build.
func enabled(controllers, name string) bool {
	star := false
	for _, c := range strings.Split(controllers, ",") {
		switch c {
		case name:
			return true
		case "-" + name:
			return false
		case "*":
			star = true
		}
	}
	return star
}
