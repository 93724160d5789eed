package kubeconfig

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"k8s.io/client-go/rest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// writeFile writes content to name in dir and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

const clustersFile = `apiVersion: v1
kind: Config
clusters:
- name: prod
  cluster:
    server: https://prod.example:6443
    insecure-skip-tls-verify: true
- name: dev
  cluster:
    server: https://dev.example:6443
    insecure-skip-tls-verify: true
`

const usersFile = `apiVersion: v1
kind: Config
current-context: dev-admin
contexts:
- name: dev-admin
  context: {cluster: dev, user: admin}
- name: prod-viewer
  context: {cluster: prod, user: viewer, namespace: shop}
users:
- name: admin
  user: {token: admin-secret-token}
- name: viewer
  user: {token: viewer-secret-token}
`

func TestResolve(t *testing.T) {
	dir := t.TempDir()
	clusters := writeFile(t, dir, "clusters.yaml", clustersFile)
	users := writeFile(t, dir, "users.yaml", usersFile)
	single := writeFile(t, dir, "single.yaml", clustersFile+strings.TrimPrefix(usersFile, "apiVersion: v1\nkind: Config\n"))
	noServer := writeFile(t, dir, "noserver.yaml", `apiVersion: v1
kind: Config
current-context: c
contexts: [{name: c, context: {cluster: x, user: u}}]
clusters: [{name: x, cluster: {}}]
users: [{name: u, user: {token: t}}]
`)
	list := func(files ...string) string { return strings.Join(files, string(os.PathListSeparator)) }

	cases := []struct {
		name       string
		path, ctx  string
		env        string
		wantHost   string
		wantToken  string
		wantSource string
		wantErr    string // substring; "" means success
		wantNoClus bool
	}{
		{name: "explicit file, current context", path: single, wantHost: "https://dev.example:6443", wantToken: "admin-secret-token",
			wantSource: "kubeconfig " + single + ", context dev-admin"},
		{name: "explicit file, context override", path: single, ctx: "prod-viewer", wantHost: "https://prod.example:6443", wantToken: "viewer-secret-token",
			wantSource: "kubeconfig " + single + ", context prod-viewer"},
		{name: "KUBECONFIG list merged across files", env: list(clusters, users), wantHost: "https://dev.example:6443", wantToken: "admin-secret-token",
			wantSource: "kubeconfig " + list(clusters, users) + ", context dev-admin"},
		{name: "KUBECONFIG list with a missing file", env: list(filepath.Join(dir, "absent.yaml"), users, clusters), ctx: "prod-viewer",
			wantHost: "https://prod.example:6443", wantToken: "viewer-secret-token"},
		{name: "explicit file wins over KUBECONFIG", path: single, env: list(filepath.Join(dir, "absent.yaml")), wantHost: "https://dev.example:6443"},
		{name: "nothing named", wantNoClus: true},
		{name: "empty KUBECONFIG entries only", env: list("", ""), wantNoClus: true},
		{name: "context without kubeconfig", ctx: "dev-admin", wantErr: `context "dev-admin" named but no kubeconfig`},
		{name: "KUBECONFIG files all missing", env: filepath.Join(dir, "absent.yaml"), wantErr: "no such file"},
		{name: "explicit file missing", path: filepath.Join(dir, "absent.yaml"), wantErr: "absent.yaml"},
		{name: "unknown context", path: single, ctx: "staging", wantErr: `context "staging" not found`},
		{name: "clusters only, no context", env: clusters, wantErr: "no current context"},
		{name: "cluster without server", path: noServer, wantErr: "context \"c\""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", tc.env)
			t.Setenv("KUBERNETES_SERVICE_HOST", "")
			cfg, source, err := Resolve(tc.path, tc.ctx)
			switch {
			case tc.wantNoClus:
				require.ErrorIs(t, err, ErrNoCluster)
				return
			case tc.wantErr != "":
				require.Error(t, err)
				require.Contains(t, err.Error(), tc.wantErr)
				require.NotContains(t, err.Error(), "secret-token")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.wantHost, cfg.Host)
			if tc.wantToken != "" {
				require.Equal(t, tc.wantToken, cfg.BearerToken)
			}
			if tc.wantSource != "" {
				require.Equal(t, tc.wantSource, source)
			}
			require.NotContains(t, source, "secret-token")
		})
	}
}

// TestProbeUnreachable checks that a server that refuses connections and one that accepts
// them but never answers are both reported, naming the host, the timeout and the cause.
func TestProbeUnreachable(t *testing.T) {
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer silent.Close()
	accepted := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	defer func() {
		silent.Close()
		for c := range accepted {
			c.Close()
		}
	}()

	refused, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	refusedAddr := refused.Addr().String()
	require.NoError(t, refused.Close())

	// Each probe must end by its own verdict, the refused connection or its 1s timeout (a probe
	// without a timeout would hang on the silent server until the test binary's timeout).
	for _, tc := range []struct{ host, cause string }{
		{"https://" + refusedAddr, `connection refused`},
		{"https://" + silent.Addr().String(), `context deadline exceeded|Client\.Timeout exceeded`},
	} {
		_, err := Probe(&rest.Config{Host: tc.host, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}, time.Second)
		require.Error(t, err, tc.host)
		require.Contains(t, err.Error(), "cannot reach the API server at "+tc.host+" within 1s: ")
		require.Contains(t, err.Error(), tc.host+"/version?timeout=1s", "the request did not carry the probe's timeout")
		require.Regexp(t, tc.cause, err.Error())
		require.False(t, errors.Is(err, ErrNoCluster))
	}
}
