// Command ctrlruntime is a controller-runtime program laid out as kubebuilder lays one out (a
// manager, a pod reconciler set up with SetupWithManager, health checks), whose informers are
// kinformer's. The only change from the stock program is one line of the manager's options:
//
//	Cache: cache.Options{NewInformer: kinformercr.NewInformer},
//
// To run to completion on its own, as the other examples do, it then drives itself: once the
// manager runs, it creates a pod, waits for the reconciler to annotate it and to see the
// annotation in the cache, deletes the pod, waits for the reconciler to see it gone, prints
// what happened and exits.
//
// It needs a real API server (controller-runtime discovers the API, which kinformer's
// embedded cluster does not serve): --local-apiserver starts the project's own etcd and
// kube-apiserver on 127.0.0.1; --kubeconfig or $KUBECONFIG name a cluster, on which it
// creates a namespace named kinformer-ctrlruntime-example-<random> and one pod there, and
// deletes both before it exits.
//
//	go run . --local-apiserver
//
// It is its own Go module (examples/ctrlruntime/go.mod), as a kubebuilder project is, so that
// kinformer's main module never requires controller-runtime.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kinformer/kinformer/examples/internal/kubeconfig"
	"github.com/kinformer/kinformer/examples/internal/localcluster"
	kinformercr "github.com/kinformer/kinformer/interop/controllerruntime"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	var usage usageError
	switch {
	case errors.As(err, &usage):
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "ctrlruntime:", err)
		os.Exit(1)
	}
}

// usageError marks a command-line error; main exits 2 on it.
type usageError struct{ error }

// run is the whole program; it returns once the manager has stopped.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("ctrlruntime", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var metricsAddr, probeAddr, kubeconfigPath string
	var enableLeaderElection, local bool
	var timeout time.Duration
	fs.StringVar(&metricsAddr, "metrics-bind-address", "0", "the address the metrics endpoint binds to (0: no metrics server)")
	fs.StringVar(&probeAddr, "health-probe-bind-address", "0", "the address the probe endpoint binds to (0: no probe server)")
	fs.BoolVar(&enableLeaderElection, "leader-elect", false, "enable leader election for the controller manager")
	fs.StringVar(&kubeconfigPath, "kubeconfig", "", "the cluster of this kubeconfig (default $KUBECONFIG, then in-cluster)")
	fs.BoolVar(&local, "local-apiserver", false, "start the project's own etcd and kube-apiserver on 127.0.0.1")
	fs.DurationVar(&timeout, "timeout", 2*time.Minute, "give up when the pod's round trip takes longer than this")
	opts := zap.Options{Development: true}
	opts.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if fs.NArg() > 0 || timeout <= 0 || (local && kubeconfigPath != "") {
		fmt.Fprintln(stderr, "ctrlruntime: need --timeout > 0, no arguments, and not both --local-apiserver and --kubeconfig")
		fs.Usage()
		return usageError{errors.New("bad flags")}
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts), zap.WriteTo(stderr)))

	cfg, stopCluster, err := clusterConfig(ctx, kubeconfigPath, local, stdout, stderr)
	if err != nil {
		return err
	}
	defer stopCluster()

	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))

	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: metricsAddr},
		HealthProbeBindAddress: probeAddr,
		LeaderElection:         enableLeaderElection,
		LeaderElectionID:       "ctrlruntime-example.kinformer.example",
		Cache:                  cache.Options{NewInformer: kinformercr.NewInformer}, // the one line
	})
	if err != nil {
		return fmt.Errorf("unable to create manager: %w", err)
	}

	reconciler := &PodReconciler{Client: mgr.GetClient(), Scheme: mgr.GetScheme(), seen: make(chan seen, 16)}
	if err := reconciler.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("unable to create controller Pod: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return fmt.Errorf("unable to set up health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return fmt.Errorf("unable to set up ready check: %w", err)
	}

	// The stock program ends with mgr.Start(ctrl.SetupSignalHandler()). This one runs the
	// manager beside its own driver, and stops it when the driver is done.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	driveErr := drive(ctx, mgr, reconciler, timeout, stdout)
	cancel()
	if err := <-done; err != nil {
		return fmt.Errorf("problem running manager: %w", err)
	}
	return driveErr
}

// clusterConfig returns the rest.Config of the cluster to run on, and a function that stops
// the local cluster when it started one.
func clusterConfig(ctx context.Context, path string, local bool, stdout, stderr io.Writer) (*rest.Config, func(), error) {
	if local {
		fmt.Fprintln(stdout, "cluster: starting a local etcd and kube-apiserver...")
		env, err := localcluster.Start(ctx, stderr)
		if err != nil {
			return nil, nil, err
		}
		fmt.Fprintf(stdout, "cluster: local kube-apiserver at %s\n", env.Config().Host)
		return env.Config(), env.Stop, nil
	}
	cfg, source, err := kubeconfig.Resolve(path, "")
	if errors.Is(err, kubeconfig.ErrNoCluster) {
		return nil, nil, errors.New("needs a cluster: --local-apiserver, --kubeconfig or $KUBECONFIG (controller-runtime cannot run on the embedded one)")
	}
	if err != nil {
		return nil, nil, err
	}
	version, err := kubeconfig.Probe(cfg, 5*time.Second)
	if err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(stdout, "cluster: %s (%s, %s)\n", cfg.Host, source, version)
	return cfg, func() {}, nil
}
