// Package localcluster starts the project's own etcd and kube-apiserver on 127.0.0.1 for the
// examples' --local-apiserver mode: the same servers the integration tests use
// (internal/testenv), built from the Go module proxy by internal/testenv/build.sh the first
// time (about 12 minutes on 2 cores; a no-op afterwards).
package localcluster

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/kinformer/kinformer/internal/testenv"
)

// modulePath is the module whose checkout holds the build script.
const modulePath = "github.com/kinformer/kinformer"

// Start returns a running etcd and kube-apiserver. It takes the binaries from
// $KINFORMER_TESTENV_BIN when that names them, and otherwise runs internal/testenv/build.sh of
// the kinformer checkout that contains the working directory, streaming the build's progress
// to progress. The caller must Stop the returned environment; the servers also die with the
// process. It fails with an error saying what to do when neither source is available.
func Start(ctx context.Context, progress io.Writer) (*testenv.Env, error) {
	return StartWithOptions(ctx, progress, testenv.Options{})
}

// StartWithOptions is Start for servers started with options, for example with an alpha
// feature gate on (testenv.Options.FeatureGates).
func StartWithOptions(ctx context.Context, progress io.Writer, options testenv.Options) (*testenv.Env, error) {
	if testenv.BinDir() == "" {
		dir, err := build(ctx, progress)
		if err != nil {
			return nil, err
		}
		// testenv reads the folder from the environment; this process is the only reader.
		if err := os.Setenv(testenv.BinDirEnv, dir); err != nil {
			return nil, err
		}
	}
	env, err := testenv.New(nil, options)
	if err != nil {
		return nil, fmt.Errorf("start etcd and kube-apiserver: %w", err)
	}
	return env, nil
}

// build runs the checkout's build script and returns the folder it prints.
func build(ctx context.Context, progress io.Writer) (string, error) {
	root, err := checkoutRoot()
	if err != nil {
		return "", err
	}
	script := filepath.Join(root, "internal", "testenv", "build.sh")
	fmt.Fprintf(progress, "local-apiserver: building etcd and kube-apiserver with %s (a no-op once built; about 12 minutes the first time)\n", script)
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Dir = root
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = progress
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s: %w", script, err)
	}
	dir := strings.TrimSpace(lastLine(out.String()))
	if dir == "" {
		return "", fmt.Errorf("%s printed no binary folder", script)
	}
	return dir, nil
}

// checkoutRoot walks up from the working directory to the go.mod of the kinformer module.
func checkoutRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil {
			if firstModuleLine(data) == modulePath {
				return dir, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("--local-apiserver needs the server binaries: run it from a kinformer checkout " +
				"(it builds them with internal/testenv/build.sh) or set " + testenv.BinDirEnv + " to the folder build.sh prints")
		}
		dir = parent
	}
}

// firstModuleLine returns the module path declared in a go.mod file, or "".
func firstModuleLine(gomod []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(gomod))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// lastLine returns the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
