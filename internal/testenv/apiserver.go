package testenv

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Name is the server's name within its Env ("apiserver-0", ...), also the prefix of its log.
func (s *APIServer) Name() string { return s.name }

// Port is the server's secure port on 127.0.0.1. It stays the same across Stop and Start.
func (s *APIServer) Port() int { return s.port }

// Host is the server's base URL.
func (s *APIServer) Host() string { return fmt.Sprintf("https://127.0.0.1:%d", s.port) }

// Running reports whether the server's process is alive.
func (s *APIServer) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return false
	}
	select {
	case <-s.proc.exited:
		return false
	default:
		return true
	}
}

// PID is the process id of the running server, or 0 when it is not running. A restarted
// server has a new one.
func (s *APIServer) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil || s.proc.cmd.Process == nil {
		return 0
	}
	select {
	case <-s.proc.exited:
		return 0
	default:
		return s.proc.cmd.Process.Pid
	}
}

// Start starts the server (again) on its port and waits for /readyz. It refuses while the
// server is running.
func (s *APIServer) Start() error {
	if s.Running() {
		return fmt.Errorf("%s is already running", s.name)
	}
	e := s.env
	compaction := e.opts.EtcdCompactionInterval
	if compaction == 0 {
		compaction = 5 * time.Minute
	}
	args := []string{
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", s.port),
		"--cert-dir=" + filepath.Join(s.dir, "certs"),
		"--etcd-servers=" + e.EtcdURL(),
		"--etcd-compaction-interval=" + compaction.String(),
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + filepath.Join(e.dir, "sa.key"),
		"--service-account-signing-key-file=" + filepath.Join(e.dir, "sa.key"),
		"--service-cluster-ip-range=10.0.0.0/24",
		"--token-auth-file=" + filepath.Join(e.dir, "tokens.csv"),
		"--authorization-mode=RBAC",
		"--disable-admission-plugins=ServiceAccount",
		"--endpoint-reconciler-type=none",
		"--profiling=false",
	}
	if gates := featureGatesFlag(e.opts.FeatureGates); gates != "" {
		args = append(args, gates)
	}
	args = append(args, e.opts.APIServerFlags...)
	p, err := e.spawn(s.name, e.opts.APIServerEnv, filepath.Join(e.bins, "kube-apiserver"), args...)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.proc = p
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	err = waitFor(ctx, p, s.checkReady)
	if err != nil {
		p.stop(e.stopGrace())
	}
	return err
}

// Stop stops the server (SIGTERM, then SIGKILL after Options.StopGrace, 10 s by default)
// and waits for it to exit.
func (s *APIServer) Stop() {
	s.mu.Lock()
	p := s.proc
	s.mu.Unlock()
	if p != nil {
		p.stop(s.env.stopGrace())
	}
}

// Restart stops the server and starts it again on the same port.
func (s *APIServer) Restart() error {
	s.Stop()
	return s.Start()
}

// Config returns a rest.Config with admin rights (group system:masters) that verifies the
// server's certificate. QPS and Burst are raised so that tests creating thousands of objects
// are not throttled.
func (s *APIServer) Config() *rest.Config { return s.ConfigForToken(s.env.token) }

// ConfigForToken is Config with another bearer token (see Env.AddToken).
func (s *APIServer) ConfigForToken(token string) *rest.Config {
	return &rest.Config{
		Host:            s.Host(),
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAFile: filepath.Join(s.dir, "certs", "apiserver.crt")},
		QPS:             1000,
		Burst:           2000,
	}
}

// Clientset returns an admin clientset for the server.
func (s *APIServer) Clientset() kubernetes.Interface {
	return kubernetes.NewForConfigOrDie(s.Config())
}

func (s *APIServer) checkReady(ctx context.Context) error {
	if _, err := os.Stat(filepath.Join(s.dir, "certs", "apiserver.crt")); err != nil {
		return errors.New("serving certificate not written yet")
	}
	client, err := rest.HTTPClientFor(s.Config())
	if err != nil {
		return err
	}
	defer client.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.Host()+"/readyz", nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != "ok" {
		return fmt.Errorf("/readyz: %d %s", resp.StatusCode, strings.TrimSpace(string(body)))
	}
	return nil
}

// httpGet fetches a plain-HTTP URL (etcd's endpoints) and returns its body.
func httpGet(ctx context.Context, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12}}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// featureGatesFlag returns the --feature-gates flag of gates, in name order, or "" for none.
func featureGatesFlag(gates map[string]bool) string {
	if len(gates) == 0 {
		return ""
	}
	names := make([]string, 0, len(gates))
	for name := range gates {
		names = append(names, name)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = name + "=" + strconv.FormatBool(gates[name])
	}
	return "--feature-gates=" + strings.Join(parts, ",")
}
