// Package kubeconfig turns the examples' connection flags into a *rest.Config the way kubectl
// does: an explicit kubeconfig file, or the files listed in KUBECONFIG merged by client-go's
// clientcmd rules, with an optional context override, or else the in-cluster service account.
// Unlike kubectl it does not fall back to ~/.kube/config: with nothing named the examples run
// on their embedded cluster, which is what a first run on a laptop should do.
package kubeconfig

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// ErrNoCluster is returned by Resolve when no kubeconfig was named, KUBECONFIG is unset or
// empty and the process is not running inside a cluster: the caller should use its embedded
// cluster.
//
// It is a sentinel error value, never modified.
var ErrNoCluster = errors.New("no kubeconfig and not in a cluster")

// Resolve returns the rest.Config for the kubeconfig file at path, or for the files listed in
// $KUBECONFIG (merged: the first file that sets a value wins) when path is empty, or the
// in-cluster config when both are empty and the in-cluster environment is present. context,
// when not empty, replaces the kubeconfig's current context. The second result says where the
// configuration came from, for display; it never contains credentials.
//
// It returns ErrNoCluster when no source applies, and an error naming the files when they are
// unreadable, malformed or incomplete (a missing context, cluster or server). It does not
// contact the server: see Probe.
func Resolve(path, context string) (*rest.Config, string, error) {
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: path}
	if path == "" {
		for _, f := range filepath.SplitList(os.Getenv("KUBECONFIG")) {
			if f != "" {
				rules.Precedence = append(rules.Precedence, f)
			}
		}
	}
	if path == "" && len(rules.Precedence) == 0 {
		if os.Getenv("KUBERNETES_SERVICE_HOST") == "" {
			if context != "" {
				return nil, "", fmt.Errorf("context %q named but no kubeconfig: set --kubeconfig or KUBECONFIG", context)
			}
			return nil, "", ErrNoCluster
		}
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, "", fmt.Errorf("in-cluster config: %w", err)
		}
		return cfg, "in-cluster service account", nil
	}
	files := path
	if files == "" {
		files = strings.Join(rules.Precedence, string(os.PathListSeparator))
	}
	if path == "" {
		// clientcmd silently skips missing files of a KUBECONFIG list; say so when all are.
		found := false
		for _, f := range rules.Precedence {
			if _, err := os.Stat(f); err == nil {
				found = true
				break
			}
		}
		if !found {
			return nil, "", fmt.Errorf("KUBECONFIG=%s: no such file", files)
		}
	}
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context})
	raw, err := loader.RawConfig()
	if err != nil {
		return nil, "", fmt.Errorf("load kubeconfig %s: %w", files, err)
	}
	name := raw.CurrentContext
	if context != "" {
		name = context
	}
	if name == "" {
		return nil, "", fmt.Errorf("kubeconfig %s: no current context, and none named", files)
	}
	if _, ok := raw.Contexts[name]; !ok {
		return nil, "", fmt.Errorf("kubeconfig %s: context %q not found", files, name)
	}
	cfg, err := loader.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("kubeconfig %s, context %q: %w", files, name, err)
	}
	return cfg, fmt.Sprintf("kubeconfig %s, context %s", files, name), nil
}

// Probe asks the server of cfg for its version within timeout, so that an unreachable or
// misconfigured cluster is reported at once instead of by an informer retrying forever. cfg
// itself is not modified. It returns the server's git version, or an error naming the host.
func Probe(cfg *rest.Config, timeout time.Duration) (string, error) {
	probe := rest.CopyConfig(cfg)
	probe.Timeout = timeout
	client, err := kubernetes.NewForConfig(probe)
	if err != nil {
		return "", fmt.Errorf("client for %s: %w", cfg.Host, err)
	}
	v, err := client.Discovery().ServerVersion()
	if err != nil {
		return "", fmt.Errorf("cannot reach the API server at %s within %s: %w", cfg.Host, timeout, err)
	}
	return v.GitVersion, nil
}
