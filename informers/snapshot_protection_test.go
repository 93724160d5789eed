package informers_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informers"
)

// runSecretsAndConfigMaps runs a factory's Secrets and ConfigMaps informers
// until synced, shuts the factory down (which writes the snapshots) and
// returns the two informers' statuses.
func runSecretsAndConfigMaps(t *testing.T, client *fake.Clientset, opts ...informers.SharedInformerOption) (secrets, configMaps cache.InformerStatus) {
	t.Helper()
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, opts...)
	s := factory.Core().V1().Secrets().Informer()
	c := factory.Core().V1().ConfigMaps().Informer()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	factory.StartWithContext(ctx)
	require.NoError(t, factory.WaitForCacheSyncWithContext(ctx).AsError())
	cancel()
	factory.Shutdown()
	var ok bool
	secrets, ok = cache.GetInformerStatus(s)
	require.True(t, ok)
	configMaps, ok = cache.GetInformerStatus(c)
	require.True(t, ok)
	return secrets, configMaps
}

func countLists(client *fake.Clientset, resource string) int {
	n := 0
	for _, a := range client.Actions() {
		if a.GetVerb() == "list" && a.GetResource().Resource == resource {
			n++
		}
	}
	return n
}

func TestSnapshotDirKeepsSecretsOffDiskWithoutKey(t *testing.T) {
	client := fake.NewClientset(
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "token", ResourceVersion: "1"}, Data: map[string][]byte{"password": []byte("hunter2")}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "settings", ResourceVersion: "2"}},
	)
	dir := filepath.Join(t.TempDir(), "snapshots")
	secrets, configMaps := runSecretsAndConfigMaps(t, client, informers.WithSnapshotDir(dir))
	assert.Equal(t, uint64(1), secrets.SnapshotsSkipped)
	assert.Zero(t, configMaps.SnapshotsSkipped)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{informers.SnapshotFileName(reflect.TypeOf(&corev1.ConfigMap{}))}, names, "only the ConfigMaps were written")

	// Marked sensitive, ConfigMaps stay off disk too, and their old file goes.
	_, configMaps = runSecretsAndConfigMaps(t, client, informers.WithSnapshotDir(dir), informers.WithSensitiveResources(&corev1.ConfigMap{}, nil))
	assert.Equal(t, uint64(1), configMaps.SnapshotsSkipped)
	entries, err = os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries)
}

func TestSnapshotEncryptionKeyWritesSecretsEncrypted(t *testing.T) {
	client := fake.NewClientset(
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "token", ResourceVersion: "1"}, Data: map[string][]byte{"password": []byte("hunter2")}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "settings", ResourceVersion: "2"}},
	)
	dir := t.TempDir()
	key := bytes.Repeat([]byte{7}, cache.SnapshotKeySize)
	secrets, configMaps := runSecretsAndConfigMaps(t, client, informers.WithSnapshotDir(dir), informers.WithSnapshotEncryptionKey(key))
	assert.Zero(t, secrets.SnapshotsSkipped)
	assert.Zero(t, configMaps.SnapshotsSkipped)
	for _, obj := range []any{&corev1.Secret{}, &corev1.ConfigMap{}} {
		data, err := os.ReadFile(filepath.Join(dir, informers.SnapshotFileName(reflect.TypeOf(obj))))
		require.NoError(t, err)
		assert.True(t, bytes.HasPrefix(data, []byte("KINFSNAE")), "%T's snapshot is encrypted", obj)
		assert.False(t, bytes.Contains(data, []byte("hunter2")))
		assert.False(t, bytes.Contains(data, []byte("token")))
	}
	require.Equal(t, 1, countLists(client, "secrets"))

	// The same key resumes without listing; another key lists.
	runSecretsAndConfigMaps(t, client, informers.WithSnapshotDir(dir), informers.WithSnapshotEncryptionKey(key))
	assert.Equal(t, 1, countLists(client, "secrets"), "resumed from the encrypted snapshot")
	assert.Equal(t, 1, countLists(client, "configmaps"))
	other := bytes.Repeat([]byte{8}, cache.SnapshotKeySize)
	secrets, _ = runSecretsAndConfigMaps(t, client, informers.WithSnapshotDir(dir), informers.WithSnapshotEncryptionKey(other))
	assert.Equal(t, 2, countLists(client, "secrets"), "another key cannot read the file")
	var serr *cache.SnapshotError
	require.ErrorAs(t, secrets.LastError, &serr)
	assert.Contains(t, serr.Error(), "fails authentication")
}

func TestSnapshotEncryptionKeyOfWrongSizeTurnsSnapshotsOff(t *testing.T) {
	client := fake.NewClientset(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "token", ResourceVersion: "1"}})
	dir := t.TempDir()
	runSecretsAndConfigMaps(t, client, informers.WithSnapshotDir(dir), informers.WithSnapshotEncryptionKey([]byte("too short")))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "no snapshot is written without the protection asked for")
}
