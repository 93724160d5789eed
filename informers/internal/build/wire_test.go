package build

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

type recordingWarnings struct{ texts []string }

func (r *recordingWarnings) HandleWarningHeaderWithContext(_ context.Context, _ int, _ string, text string) {
	r.texts = append(r.texts, text)
}

func TestWarningHandlerOfReadsTheClientsHandler(t *testing.T) {
	handler := &recordingWarnings{}
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: "https://127.0.0.1:1", WarningHandlerWithContext: handler})
	require.NoError(t, err)
	rc, ok := cs.CoreV1().RESTClient().(*rest.RESTClient)
	require.True(t, ok)
	got := warningHandlerOf(rc)
	require.NotNil(t, got, "client-go's RESTClient no longer keeps its warning handler where warningHandlerOf reads it")
	got.HandleWarningHeaderWithContext(context.Background(), 299, "-", "text")
	require.Equal(t, []string{"text"}, handler.texts)

	plain, err := kubernetes.NewForConfig(&rest.Config{Host: "https://127.0.0.1:1"})
	require.NoError(t, err)
	require.Nil(t, warningHandlerOf(plain.CoreV1().RESTClient().(*rest.RESTClient)))
	require.Nil(t, warningHandlerOf(nil))
}
