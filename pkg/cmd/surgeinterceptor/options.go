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

// Package surgeinterceptor holds the options and the command of
// surge-interceptor, in the Validate, Run flow of Kubernetes components.
package surgeinterceptor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/record"
	cliflag "k8s.io/component-base/cli/flag"
	componentbaseconfig "k8s.io/component-base/config"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	lifecycleutil "github.com/evictionrequest/apiserver/pkg/api/lifecycle/v1alpha1"
	"github.com/evictionrequest/apiserver/pkg/cmd/options"
	"github.com/evictionrequest/apiserver/pkg/version"

	versioned "github.com/evictionrequest/apiserver/pkg/generated/clientset/versioned"
	"github.com/evictionrequest/apiserver/pkg/sdk/evictionapi"
	"github.com/evictionrequest/apiserver/pkg/sdk/interceptor"
	"github.com/evictionrequest/apiserver/pkg/surge"
	"github.com/evictionrequest/apiserver/pkg/surge/metrics"
	"github.com/evictionrequest/apiserver/pkg/util/leaderelect"
)

// Options are the command-line options of surge-interceptor.
type Options struct {
	Kubeconfig string
	// Name is the interceptor's name; empty is the default of the API.
	Name      string
	Namespace string
	// API is the EvictionRequest API to answer on: auto, coordination or
	// lifecycle.
	API string
	// Client limits the client to kube-apiserver and bounds each call.
	Client *options.ClientOptions
	// HeartbeatPeriod, PollInterval and JanitorPeriod pace the work.
	HeartbeatPeriod time.Duration
	PollInterval    time.Duration
	JanitorPeriod   time.Duration
	// LeaderElection runs the interceptor only while it holds its Lease.
	LeaderElection componentbaseconfig.LeaderElectionConfiguration
	// MetricsBindAddress serves /metrics, /healthz and /readyz; empty or
	// "0" serves nothing.
	MetricsBindAddress string
	Logs               *logsapi.LoggingConfiguration

	// api is the API Run found.
	api evictionapi.API
}

// validName checks name as api names interceptors, or, before the API is
// discovered, as either does; empty is the default.
func validName(api evictionapi.API, name string) error {
	if name == "" {
		return nil
	}
	var coordination, lifecycle error
	if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
		coordination = fmt.Errorf("--name %q is no interceptor name of coordination.k8s.io: %v", name, msgs)
	}
	if err := lifecycleutil.ValidateParticipantName(name); err != nil {
		lifecycle = fmt.Errorf("--name %q is no responder name of lifecycle.k8s.io: %w", name, err)
	}
	switch {
	case api == evictionapi.Coordination:
		return coordination
	case api == evictionapi.Lifecycle:
		return lifecycle
	case coordination != nil && lifecycle != nil:
		return errors.Join(coordination, lifecycle)
	}
	return nil
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{
		API:                "auto",
		Client:             options.NewClientOptions(20, 40),
		PollInterval:       2 * time.Second,
		JanitorPeriod:      10 * time.Second,
		LeaderElection:     options.NewLeaderElection("evictionrequest-surge-interceptor"),
		MetricsBindAddress: ":8080",
		Logs:               logsapi.NewLoggingConfiguration(),
	}
}

// Flags returns the flags in named sections.
func (o *Options) Flags() cliflag.NamedFlagSets {
	var fss cliflag.NamedFlagSets
	fs := fss.FlagSet("interceptor")
	fs.StringVar(&o.API, "api", o.API, "EvictionRequest API to answer on: auto (coordination.k8s.io when evictionrequest-apiserver is installed, else lifecycle.k8s.io), coordination or lifecycle.")
	fs.StringVar(&o.Name, "name", o.Name, "Interceptor name, as the pods' evictionrequest.coordination.k8s.io/interceptors annotation lists it (default "+surge.DefaultName+
		"), or the responder name of spec.evictionResponders on lifecycle.k8s.io (default "+surge.DefaultLifecycleName+").")
	fs.StringVar(&o.Namespace, "namespace", o.Namespace, "Only answer the EvictionRequests of this namespace; all when empty.")
	fs.DurationVar(&o.HeartbeatPeriod, "heartbeat-period", o.HeartbeatPeriod, "Heartbeat period while a surge runs; 0 is a tenth of the request's heartbeatDeadlineSeconds.")
	fs.DurationVar(&o.PollInterval, "poll-interval", o.PollInterval, "How often a surge looks again at the replacement pods while it waits for them.")
	fs.DurationVar(&o.JanitorPeriod, "janitor-period", o.JanitorPeriod, "How often surges whose request was withdrawn, canceled or passed on are undone.")
	fs = fss.FlagSet("cluster")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Kubeconfig of the cluster; in-cluster when empty.")
	o.Client.AddFlags(fs, "the interceptor")
	options.AddLeaderElectionFlags(&o.LeaderElection, fss.FlagSet("leader election"))
	fs = fss.FlagSet("metrics")
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress, "Address of /metrics, /healthz and /readyz; \"0\" serves none.")
	logsapi.AddFlags(o.Logs, fss.FlagSet("logging"))
	return fss
}

// Validate checks the options.
func (o *Options) Validate() error {
	var errs []error
	api, err := evictionapi.Parse(o.API)
	if err != nil {
		errs = append(errs, fmt.Errorf("--api: %w", err))
	}
	if err := validName(api, o.Name); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, o.Client.Validate()...)
	for flag, d := range map[string]time.Duration{"--poll-interval": o.PollInterval, "--janitor-period": o.JanitorPeriod} {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive", flag))
		}
	}
	errs = append(errs, options.ValidateLeaderElection(o.LeaderElection)...)
	return errors.Join(errs...)
}

// Run runs the surge interceptor until ctx ends.
func (o *Options) Run(ctx context.Context) error {
	if err := logsapi.ValidateAndApply(o.Logs, nil); err != nil {
		return err
	}
	logger := klog.FromContext(ctx)
	config, err := clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
	if err != nil {
		return err
	}
	config = rest.AddUserAgent(o.Client.ApplyTo(config), "surge-interceptor")
	kube, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}
	evr, err := versioned.NewForConfig(config)
	if err != nil {
		return err
	}
	metrics.Register()
	leaderHealth := leaderelection.NewLeaderHealthzAdaptor(20 * time.Second)
	var checks []healthz.HealthChecker
	if o.LeaderElection.LeaderElect {
		checks = append(checks, leaderHealth)
	}
	stopServing, err := options.Serve(ctx, o.MetricsBindAddress, checks...)
	if err != nil {
		return err
	}
	defer stopServing()

	api, _ := evictionapi.Parse(o.API)
	if o.api, err = evictionapi.Discover(kube.Discovery(), api); err != nil {
		return err
	}
	if o.Name == "" {
		o.Name = surge.DefaultName
		if o.api == evictionapi.Lifecycle {
			o.Name = surge.DefaultLifecycleName
		}
	}
	if err := validName(o.api, o.Name); err != nil {
		return err
	}
	logger.Info("Starting the surge interceptor", "name", o.Name, "api", o.api, "version", version.Get())
	if !o.LeaderElection.LeaderElect {
		return o.runTerm(ctx, kube, evr)
	}
	return leaderelect.Run(ctx, kube.CoordinationV1(), options.LeaderElectConfig(o.LeaderElection, leaderHealth), func(ctx context.Context) {
		if err := o.runTerm(ctx, kube, evr); err != nil {
			klog.FromContext(ctx).Error(err, "Surge interceptor term failed")
		}
	})
}

// runTerm runs the interceptor and its janitor on informers of their own.
func (o *Options) runTerm(ctx context.Context, kube kubernetes.Interface, evr versioned.Interface) error {
	factory := informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithNamespace(o.Namespace))
	defer factory.Shutdown()
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kube.CoreV1().Events("")})
	defer broadcaster.Shutdown()
	surger := surge.New(surge.Config{
		Name: o.Name, API: o.api, Kube: kube, EvictionRequests: evr, Informers: factory,
		Recorder:     broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: o.Name}),
		Clock:        clock.RealClock{},
		PollInterval: o.PollInterval, CallTimeout: o.Client.CallTimeout,
	})
	i, err := interceptor.New(interceptor.Config{
		Name: o.Name, API: o.api, Namespace: o.Namespace, Handler: surger.Handle,
		Client: evr, KubeClient: kube,
		HeartbeatPeriod: o.HeartbeatPeriod, CallTimeout: o.Client.CallTimeout,
	})
	if err != nil {
		return err
	}
	factory.Start(ctx.Done())
	if !surger.WaitForCacheSync(ctx) {
		return ctx.Err()
	}
	janitorDone := make(chan error, 1)
	go func() { janitorDone <- surger.RunJanitor(ctx, o.JanitorPeriod) }()
	err = i.Run(ctx)
	return errors.Join(err, <-janitorDone)
}

// NewCommand returns the surge-interceptor command, run until ctx ends.
func NewCommand(ctx context.Context) *cobra.Command {
	o := NewOptions()
	cmd := &cobra.Command{
		Use:   "surge-interceptor",
		Short: "Replace the pods of Deployments by a surge before they are evicted",
		Long: `surge-interceptor is the deployment.apps.k8s.io interceptor of EvictionRequests (KEP-4563): when the
eviction of a pod of a Deployment is requested, it scales the Deployment up first, waits until the
replacements are available on other nodes, and scales it back so that exactly the evicted pod is
removed. Pods opt in through the evictionrequest.coordination.k8s.io/interceptors annotation of
their Deployment's pod template.`,
		Version:      version.Get(),
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	cmd.SetContext(ctx)
	options.AddNamedFlags(cmd, o.Flags())
	return cmd
}
