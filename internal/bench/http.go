package bench

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
)

// Media types the PodServer speaks.
const (
	MediaJSON     = "application/json"
	MediaProtobuf = "application/vnd.kubernetes.protobuf"
)

// PodServer is an httptest server speaking the API server's LIST and WATCH
// of pods (GET /api/v1/pods and /api/v1/namespaces/{ns}/pods, cluster-wide
// content only) in JSON and protobuf, for reading through a real clientset.
//
// LIST returns the whole population, encoded once up front in the media
// type the request prefers (protobuf when its Accept header names protobuf
// first, else JSON), ignoring paging as the watch cache does for
// resourceVersion "0". WATCH opens an empty stream that stays open until
// the client goes away or the server closes. A streaming list (a WATCH with
// sendInitialEvents=true) is refused with 400 Bad Request, so that
// client-go's and kinformer's reflectors both fall back to LIST and WATCH.
type PodServer struct {
	srv     *httptest.Server
	encoded map[string][]byte
	closing chan struct{}
	once    sync.Once

	lists, watches, refused atomic.Int64
}

// NewPodServer starts a server for NewPodList(0, pods, "1000").
func NewPodServer(pods int) (*PodServer, error) {
	list := NewPodList(0, pods, "1000")
	s := &PodServer{encoded: map[string][]byte{}, closing: make(chan struct{})}
	for _, media := range []string{MediaJSON, MediaProtobuf} {
		info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), media)
		if !ok {
			return nil, fmt.Errorf("no serializer for %s", media)
		}
		b, err := runtime.Encode(scheme.Codecs.EncoderForVersion(info.Serializer, v1.SchemeGroupVersion), list)
		if err != nil {
			return nil, fmt.Errorf("encoding the pod list as %s: %w", media, err)
		}
		s.encoded[media] = b
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s, nil
}

// URL is the server's base URL, for rest.Config.Host.
func (s *PodServer) URL() string { return s.srv.URL }

// ListBytes returns the size of the encoded list in media type media.
func (s *PodServer) ListBytes(media string) int { return len(s.encoded[media]) }

// Counts returns how many LISTs, WATCHes and refused streaming lists were
// served.
func (s *PodServer) Counts() (lists, watches, refused int64) {
	return s.lists.Load(), s.watches.Load(), s.refused.Load()
}

// Close ends open watches and shuts the server down.
func (s *PodServer) Close() {
	s.once.Do(func() {
		close(s.closing)
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
}

func (s *PodServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/pods") {
		http.NotFound(w, r)
		return
	}
	q := r.URL.Query()
	media := MediaJSON
	if accept := r.Header.Get("Accept"); strings.HasPrefix(accept, MediaProtobuf) {
		media = MediaProtobuf
	}
	if q.Get("watch") == "true" || q.Get("watch") == "1" {
		if q.Get("sendInitialEvents") == "true" {
			s.refused.Add(1)
			w.Header().Set("Content-Type", MediaJSON)
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"streaming lists are not served here","reason":"BadRequest","code":400}`)
			return
		}
		s.watches.Add(1)
		ct := MediaJSON
		if media == MediaProtobuf {
			ct = MediaProtobuf + ";stream=watch"
		}
		w.Header().Set("Content-Type", ct)
		w.Header().Set("Transfer-Encoding", "chunked")
		w.WriteHeader(http.StatusOK)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		select {
		case <-r.Context().Done():
		case <-s.closing:
		}
		return
	}
	s.lists.Add(1)
	w.Header().Set("Content-Type", media)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(s.encoded[media])
}
