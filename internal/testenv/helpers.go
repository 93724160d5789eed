package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Namespace creates a namespace for one test, named after the test with a random suffix
// (at most 57 characters, a valid DNS label), and returns its name; a failure to create it
// fails tb. Namespaces are never deleted: without a namespace controller a deleted one stays
// Terminating for good.
func Namespace(tb testing.TB, cs kubernetes.Interface) string {
	tb.Helper()
	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	name := strings.NewReplacer("/", "-", "_", "-").Replace(strings.ToLower(tb.Name()))
	if len(name) > 50 {
		name = name[:50]
	}
	name = strings.Trim(name, "-") + "-" + hex.EncodeToString(suffix)
	_, err := cs.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		tb.Fatalf("create namespace %s: %v", name, err)
	}
	return name
}

// LeakOptions are the goleak options of tests that talk to an API server: they pass over
// the goroutines of idle HTTP connections, which client-go's cached transports close on
// their own schedule, and klog's flush daemon. What such a test must not leave behind is
// everything else: informers, reflectors, handlers, controllers.
func LeakOptions() []goleak.Option {
	return []goleak.Option{
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
		goleak.IgnoreAnyFunction("golang.org/x/net/http2.(*ClientConn).readLoop"),
		goleak.IgnoreAnyFunction("golang.org/x/net/http2.(*clientConnReadLoop).run"),
		goleak.IgnoreAnyFunction("net/http.(*http2ClientConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*http2clientConnReadLoop).run"),
		goleak.IgnoreAnyFunction("k8s.io/client-go/util/connrotation"),
		goleak.IgnoreAnyFunction("k8s.io/klog/v2.(*flushDaemon).run"),
	}
}
