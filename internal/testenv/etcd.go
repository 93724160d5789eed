package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// EtcdRevision returns etcd's current revision (the API servers' resourceVersion space).
func (e *Env) EtcdRevision(ctx context.Context) (int64, error) {
	var out struct {
		Header struct {
			Revision string `json:"revision"`
		} `json:"header"`
	}
	if err := e.etcdCall(ctx, "/v3/maintenance/status", map[string]any{}, &out); err != nil {
		return 0, err
	}
	return strconv.ParseInt(out.Header.Revision, 10, 64)
}

// CompactEtcd compacts etcd's history up to its current revision, so that a watch resumed from
// an older resourceVersion that reaches etcd (the watch cache off, or after an API server
// restart) is answered with 410 Gone. It returns the revision compacted to.
func (e *Env) CompactEtcd(ctx context.Context) (int64, error) {
	rev, err := e.EtcdRevision(ctx)
	if err != nil {
		return 0, err
	}
	req := map[string]any{"revision": strconv.FormatInt(rev, 10), "physical": true}
	if err := e.etcdCall(ctx, "/v3/kv/compaction", req, nil); err != nil {
		return 0, err
	}
	return rev, nil
}

// etcdCall posts a JSON request to etcd's gRPC gateway and decodes the answer into out.
func (e *Env) etcdCall(ctx context.Context, path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.EtcdURL()+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("etcd %s: %d %s", path, resp.StatusCode, b)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(b, out)
}
