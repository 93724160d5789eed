// Package kubeconfig turns the examples' connection flags into a *rest.Config: an explicit
// kubeconfig file, the KUBECONFIG variable, or the in-cluster service account.
//
// It reads the kubeconfig with client-go's clientcmd/api/latest codec and builds the
// rest.Config from the current context itself (cluster server and CA, client certificate,
// bearer token or token file, basic auth, exec and auth-provider plugins), because
// k8s.io/client-go/tools/clientcmd pulls in a module kinformer's go.mod does not carry.
// Context overrides, merged KUBECONFIG lists and proxy settings are not supported: the
// first file in KUBECONFIG is used.
package kubeconfig

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	clientcmdlatest "k8s.io/client-go/tools/clientcmd/api/latest"
)

// ErrNoCluster is returned by Resolve when no kubeconfig was named, KUBECONFIG is unset and
// the process is not running inside a cluster: the caller should use its embedded cluster.
//
// It is a sentinel error value, never modified.
var ErrNoCluster = errors.New("no kubeconfig and not in a cluster")

// Resolve returns the rest.Config for path, or for $KUBECONFIG when path is empty, or the
// in-cluster config when both are empty and the in-cluster environment is present, together
// with a description of where it came from. It returns ErrNoCluster when none of those
// applies, and a descriptive error when the chosen source is unreadable or incomplete. It does
// not contact the server: see Probe.
func Resolve(path string) (*rest.Config, string, error) {
	if path == "" {
		if env := os.Getenv("KUBECONFIG"); env != "" {
			path = strings.Split(env, string(os.PathListSeparator))[0]
		}
	}
	if path == "" {
		if os.Getenv("KUBERNETES_SERVICE_HOST") == "" {
			return nil, "", ErrNoCluster
		}
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, "", fmt.Errorf("in-cluster config: %w", err)
		}
		return cfg, "in-cluster service account", nil
	}
	cfg, err := FromFile(path)
	if err != nil {
		return nil, "", err
	}
	return cfg, "kubeconfig " + path, nil
}

// FromFile builds a rest.Config from the current context of the kubeconfig file at path.
func FromFile(path string) (*rest.Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read kubeconfig: %w", err)
	}
	obj, err := runtime.Decode(clientcmdlatest.Codec, data)
	if err != nil {
		return nil, fmt.Errorf("parse kubeconfig %s: %w", path, err)
	}
	kc, ok := obj.(*clientcmdapi.Config)
	if !ok {
		return nil, fmt.Errorf("parse kubeconfig %s: unexpected %T", path, obj)
	}
	ctx, ok := kc.Contexts[kc.CurrentContext]
	if !ok {
		return nil, fmt.Errorf("kubeconfig %s: current context %q not found", path, kc.CurrentContext)
	}
	cluster, ok := kc.Clusters[ctx.Cluster]
	if !ok {
		return nil, fmt.Errorf("kubeconfig %s: cluster %q of context %q not found", path, ctx.Cluster, kc.CurrentContext)
	}
	if cluster.Server == "" {
		return nil, fmt.Errorf("kubeconfig %s: cluster %q has no server", path, ctx.Cluster)
	}
	dir := filepath.Dir(path)
	rel := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	cfg := &rest.Config{
		Host: cluster.Server,
		TLSClientConfig: rest.TLSClientConfig{
			Insecure:   cluster.InsecureSkipTLSVerify,
			ServerName: cluster.TLSServerName,
			CAFile:     rel(cluster.CertificateAuthority),
			CAData:     cluster.CertificateAuthorityData,
		},
	}
	if user, ok := kc.AuthInfos[ctx.AuthInfo]; ok {
		cfg.CertFile, cfg.CertData = rel(user.ClientCertificate), user.ClientCertificateData
		cfg.KeyFile, cfg.KeyData = rel(user.ClientKey), user.ClientKeyData
		cfg.BearerToken, cfg.BearerTokenFile = user.Token, rel(user.TokenFile)
		cfg.Username, cfg.Password = user.Username, user.Password
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user.Impersonate, UID: user.ImpersonateUID,
			Groups: user.ImpersonateGroups, Extra: user.ImpersonateUserExtra}
		cfg.ExecProvider, cfg.AuthProvider = user.Exec, user.AuthProvider
	}
	return cfg, nil
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
