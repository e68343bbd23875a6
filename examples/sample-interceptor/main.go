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

// Command sample-interceptor is a small interceptor built on the SDK
// (pkg/sdk/interceptor), the worked example of the README: it "migrates" a
// pod in steps, reporting each step and an ETA, and then passes the request
// on, declines it, or evicts the pod itself. It keeps its progress in the
// request's status message, so that after a restart it resumes at the step
// it was at. The e2e suite runs it as a process to kill and restart.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	versioned "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/sdk/interceptor"
	"github.com/evictionrequest/apiserver/pkg/util/leaderelect"
)

type options struct {
	kubeconfig      string
	name, namespace string
	api             string
	steps           int
	stepDuration    time.Duration
	outcome         string
	heartbeatPeriod time.Duration
	qps             float64
	burst           int
	leaderElect     bool
	leaseNamespace  string
}

func main() {
	var o options
	flag.StringVar(&o.kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "Kubeconfig of the cluster; in-cluster when empty.")
	flag.StringVar(&o.name, "name", "sample.interceptor.example.com", "Interceptor name, as the pods' evictionrequest.coordination.k8s.io/interceptors annotation lists it, or, on lifecycle.k8s.io, a responder name as spec.evictionResponders lists it (such as sample.example.com/migrator).")
	flag.StringVar(&o.api, "api", "auto", "EvictionRequest API to answer on: auto (discovered), coordination or lifecycle.")
	flag.StringVar(&o.namespace, "namespace", "", "Namespace to answer requests in; all when empty.")
	flag.IntVar(&o.steps, "steps", 5, "Number of migration steps.")
	flag.DurationVar(&o.stepDuration, "step-duration", 2*time.Second, "How long each step takes.")
	flag.StringVar(&o.outcome, "outcome", "complete", "What to do after the steps: complete (pass the request on), decline (pass it on at once, without the steps) or evict (evict the pod).")
	flag.DurationVar(&o.heartbeatPeriod, "heartbeat-period", 0, "Heartbeat period; 0 is a tenth of the request's heartbeat deadline.")
	flag.Float64Var(&o.qps, "kube-api-qps", 20, "Requests per second to kube-apiserver.")
	flag.IntVar(&o.burst, "kube-api-burst", 40, "Burst of requests to kube-apiserver.")
	flag.BoolVar(&o.leaderElect, "leader-elect", false, "Act only while holding a Lease named after the interceptor, so that several replicas are safe.")
	flag.StringVar(&o.leaseNamespace, "leader-elect-namespace", "default", "Namespace of the Lease.")
	klog.InitFlags(nil)
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		klog.Background().Error(err, "sample-interceptor failed")
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	switch o.outcome {
	case "complete", "decline", "evict":
	default:
		return fmt.Errorf("--outcome must be complete, decline or evict, got %q", o.outcome)
	}
	config, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		return err
	}
	config.QPS, config.Burst = float32(o.qps), o.burst
	kube, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}
	client, err := versioned.NewForConfig(config)
	if err != nil {
		return err
	}
	api, err := evictionapi.Parse(o.api)
	if err != nil {
		return fmt.Errorf("--api: %w", err)
	}
	cfg := interceptor.Config{
		Name:            o.name,
		API:             api,
		Namespace:       o.namespace,
		Client:          client,
		KubeClient:      kube,
		HeartbeatPeriod: o.heartbeatPeriod,
		Handler:         handler(o, kube),
	}
	if o.leaderElect {
		// A responder name's "/" is not allowed in a Lease name.
		cfg.LeaderElection = &leaderelect.Config{Namespace: o.leaseNamespace, Name: strings.ReplaceAll(o.name, "/", "-")}
	}
	i, err := interceptor.New(cfg)
	if err != nil {
		return err
	}
	return i.Run(ctx)
}

// stepMessage is how the sample reports, and later finds, its progress.
var stepMessage = regexp.MustCompile(`: step (\d+) of \d+$`)

func handler(o options, kube kubernetes.Interface) interceptor.Handler {
	return func(ctx context.Context, req *interceptor.Request) (interceptor.Result, error) {
		logger := klog.FromContext(ctx)
		pod := req.Pod()
		if o.outcome == "decline" {
			return interceptor.Decline("%s does not migrate pod %s.", o.name, pod.Name), nil
		}
		// Resume where a previous run stopped: the step it reported last.
		first := 1
		if m := stepMessage.FindStringSubmatch(req.Message()); m != nil {
			first, _ = strconv.Atoi(m[1])
			logger.Info("Resuming", "step", first)
		}
		for step := first; step <= o.steps; step++ {
			finish := time.Now().Add(time.Duration(o.steps-step+1) * o.stepDuration)
			if err := req.Report(ctx, interceptor.Progress{
				Message:            fmt.Sprintf("%s: step %d of %d", o.name, step, o.steps),
				ExpectedFinishTime: &finish,
			}); err != nil {
				return interceptor.Result{}, err
			}
			select {
			case <-ctx.Done():
				return interceptor.Result{}, ctx.Err()
			case <-time.After(o.stepDuration):
			}
		}
		if o.outcome == "complete" {
			return interceptor.Complete("%s: all %d steps done; passing pod %s on.", o.name, o.steps, pod.Name), nil
		}
		err := kube.PolicyV1().Evictions(pod.Namespace).Evict(ctx, &policyv1.Eviction{
			ObjectMeta:    metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name},
			DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr.To(req.PodUID())}},
		})
		if err != nil {
			return interceptor.Result{}, fmt.Errorf("evicting pod %s: %w", pod, err)
		}
		return interceptor.Terminated("%s: all %d steps done; evicted pod %s.", o.name, o.steps, pod.Name), nil
	}
}
