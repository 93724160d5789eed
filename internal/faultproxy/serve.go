package faultproxy

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// serve handles one request: applies the fault a rule picks, or forwards it.
func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	if p.closing {
		p.mu.Unlock()
		abort()
	}
	p.handlers.Add(1)
	p.mu.Unlock()
	defer p.handlers.Done()
	info := parseRequest(r)
	ctx, cancel := context.WithCancel(r.Context())
	a := &activeRequest{info: info, ctx: ctx, cancel: cancel}
	p.mu.Lock()
	p.active[a] = struct{}{}
	p.mu.Unlock()
	defer func() {
		cancel()
		p.mu.Lock()
		delete(p.active, a)
		p.mu.Unlock()
	}()
	r = r.WithContext(ctx)
	defer func() {
		if a.cut.Load() {
			abort()
		}
	}()
	f := p.pick(info)
	if p.onRequest != nil {
		p.onRequest(info, f)
	}
	if f == nil {
		p.forward(w, r, info, nil)
		return
	}
	switch f.Kind {
	case Delay:
		p.count(Delay)
		if !p.wait(r.Context(), f.Delay) {
			abort()
		}
		p.forward(w, r, info, nil)
	case NoWatchList:
		if info.Verb != Watch || info.Query.Get("sendInitialEvents") != "true" {
			p.forward(w, r, info, nil)
			return
		}
		p.count(NoWatchList)
		writeStatus(w, noWatchListStatus())
	case Gone:
		p.count(Gone)
		if info.Verb == Watch {
			enc := acceptedEncoding(r)
			raw, err := encodeObject(enc, expiredStatus())
			if err == nil {
				var frame []byte
				if frame, err = encodeEvent(enc, "ERROR", raw); err == nil {
					w.Header().Set("Content-Type", watchContentType(enc))
					w.WriteHeader(http.StatusOK)
					_, _ = w.Write(frame)
					return
				}
			}
			writeStatus(w, errorStatus(http.StatusInternalServerError, 0))
			return
		}
		writeStatus(w, expiredStatus())
	case TooManyRequests:
		p.count(TooManyRequests)
		writeStatus(w, errorStatus(http.StatusTooManyRequests, max(1, f.RetryAfterSeconds)))
	case InternalError:
		p.count(InternalError)
		writeStatus(w, errorStatus(http.StatusInternalServerError, 0))
	case ServiceUnavailable:
		p.count(ServiceUnavailable)
		writeStatus(w, errorStatus(http.StatusServiceUnavailable, f.RetryAfterSeconds))
	case BlackHole:
		if f.AfterBookmark && info.Verb == Watch {
			p.forward(w, r, info, f)
			return
		}
		p.count(BlackHole)
		p.blackHole(w, r, f)
	case CloseConn:
		p.count(CloseConn)
		if info.Verb != Watch {
			p.closeConn(r)
			abort()
		}
		p.forward(w, r, info, f)
	case WrongType, NoObject, BookmarkNoRV:
		if info.Verb != Watch {
			p.forward(w, r, info, nil)
			return
		}
		p.forward(w, r, info, f)
	default: // CutFrame, Garbage, or an unknown kind (forwarded untouched)
		p.forward(w, r, info, f)
	}
}

// wait sleeps d unless ctx ends or the proxy closes first; it reports whether d passed.
func (p *Proxy) wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
	case <-p.closed:
	}
	return false
}

func (p *Proxy) blackHole(w http.ResponseWriter, r *http.Request, f *Fault) {
	if f.SendHeaders {
		w.Header().Set("Content-Type", watchContentType(acceptedEncoding(r)))
		w.WriteHeader(http.StatusOK)
		_ = http.NewResponseController(w).Flush()
	}
	if p.holdSilence(r, f) && !f.SendHeaders {
		abort()
	}
}

// holdSilence waits for f.Hold (for ever when zero) unless the client goes away or the
// proxy closes first; it reports whether the hold ran out.
func (p *Proxy) holdSilence(r *http.Request, f *Fault) bool {
	var hold <-chan time.Time
	if f.Hold > 0 {
		t := time.NewTimer(f.Hold)
		defer t.Stop()
		hold = t.C
	}
	select {
	case <-hold:
		return true
	case <-r.Context().Done():
	case <-p.closed:
	}
	return false
}

// silenceAfterBookmark forwards the frames of a watch stream up to and including its
// first periodic bookmark, then closes the server's stream and holds the client's
// response open without writing (a BlackHole with AfterBookmark).
func (p *Proxy) silenceAfterBookmark(w io.Writer, rc *http.ResponseController, r *http.Request, enc encoding, body io.ReadCloser, f *Fault) {
	fr := newFrameReader(enc, body)
	for {
		frame, err := fr.next()
		if len(frame) > 0 {
			if _, werr := w.Write(frame); werr != nil {
				return
			}
			_ = rc.Flush()
		}
		if err != nil {
			return // the stream ended before a periodic bookmark: nothing injected
		}
		if info, ierr := inspectFrame(enc, frame); ierr == nil && info.eventType == "BOOKMARK" && !info.initialEventsEnd {
			break
		}
	}
	_ = body.Close()
	p.count(BlackHole)
	p.holdSilence(r, f)
}

// roundTrip sends a copy of r to the server.
func (p *Proxy) roundTrip(r *http.Request) (*http.Response, error) {
	out, err := http.NewRequestWithContext(r.Context(), r.Method, p.target+r.URL.RequestURI(), r.Body)
	if err != nil {
		return nil, err
	}
	out.ContentLength = r.ContentLength
	out.Header = r.Header.Clone()
	for _, h := range hopHeaders {
		out.Header.Del(h)
	}
	// The transport asks for gzip itself and decompresses, so the proxy sees frames.
	out.Header.Del("Accept-Encoding")
	return p.transport.RoundTrip(out)
}

// hopHeaders are not forwarded.
var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// forwardAttempts is how many times the proxy sends a GET to the server when the
// transport fails before any answer (a connection the server just closed, for one): the
// only faults the proxy's clients meet are the ones a test injects.
const forwardAttempts = 3

// forward sends r to the server and streams the answer back, applying f (a mid-stream
// fault, or nil) to the body.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, info RequestInfo, f *Fault) {
	var resp *http.Response
	var err error
	for attempt := 1; ; attempt++ {
		resp, err = p.roundTrip(r)
		if err == nil || r.Method != http.MethodGet || attempt == forwardAttempts || r.Context().Err() != nil {
			break
		}
	}
	if err != nil {
		if r.Context().Err() != nil {
			return
		}
		s := errorStatus(http.StatusBadGateway, 0)
		s.Message = "faultproxy: the server is unreachable: " + err.Error()
		writeStatus(w, s)
		return
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	for _, h := range hopHeaders {
		w.Header().Del(h)
	}
	w.Header().Del("Content-Length")
	enc := responseEncoding(resp.Header.Get("Content-Type"))
	rc := http.NewResponseController(w)

	streaming := info.Verb == Watch && resp.StatusCode == http.StatusOK
	if f != nil && !streaming {
		switch f.Kind {
		case CutFrame:
			p.count(CutFrame)
			body, _ := io.ReadAll(resp.Body)
			w.WriteHeader(resp.StatusCode)
			_, _ = w.Write(body[:len(body)/2])
			return
		case Garbage:
			p.count(Garbage)
			_, _ = io.Copy(io.Discard, resp.Body)
			w.WriteHeader(resp.StatusCode)
			_, _ = w.Write(garbage(enc))
			return
		}
		f = nil // the other kinds only act on a watch stream
	}
	w.WriteHeader(resp.StatusCode)
	_ = rc.Flush()
	if f == nil {
		copyFlushing(w, rc, resp.Body)
		return
	}
	if f.Kind == BlackHole {
		p.silenceAfterBookmark(w, rc, r, enc, resp.Body, f)
		return
	}
	fr := newFrameReader(enc, resp.Body)
	for i := 0; i < f.AfterFrames; i++ {
		frame, err := fr.next()
		if len(frame) > 0 {
			if _, werr := w.Write(frame); werr != nil {
				return
			}
			_ = rc.Flush()
		}
		if err != nil {
			return // the stream ended before the fault: nothing injected, nothing counted
		}
	}
	switch f.Kind {
	case CloseConn:
		p.closeConn(r)
		abort()
	case Garbage:
		p.count(Garbage)
		_, _ = w.Write(garbage(enc))
		_ = rc.Flush()
		return
	}
	frame, err := fr.next()
	if err != nil {
		if len(frame) > 0 {
			_, _ = w.Write(frame)
		}
		return
	}
	switch f.Kind {
	case CutFrame:
		p.count(CutFrame)
		_, _ = w.Write(frame[:len(frame)/2])
		_ = rc.Flush()
		return
	case WrongType, NoObject, BookmarkNoRV:
		like, ierr := inspectFrame(enc, frame)
		var bad []byte
		if ierr == nil {
			bad, ierr = badEvent(f.Kind, enc, like)
		}
		if ierr == nil {
			p.count(f.Kind)
			if _, werr := w.Write(bad); werr != nil {
				return
			}
		}
	}
	if _, err := w.Write(frame); err != nil {
		return
	}
	_ = rc.Flush()
	copyFlushing(w, rc, fr.br)
}

// copyFlushing copies body to w, flushing after every read so that watch events are not
// held back.
func copyFlushing(w io.Writer, rc *http.ResponseController, body io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			_ = rc.Flush()
		}
		if err != nil {
			return
		}
	}
}

// writeStatus answers with s as a JSON Status and its code, and a Retry-After header when
// s carries one.
func writeStatus(w http.ResponseWriter, s *metav1.Status) {
	if s.Details != nil && s.Details.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(s.Details.RetryAfterSeconds)))
	}
	w.Header().Set("Content-Type", jsonMediaType)
	w.WriteHeader(int(s.Code))
	_, _ = w.Write(encodeStatusBody(s))
}

// closeConn closes the client connection r arrived on: it first ends the sending side, so
// that what was written reaches the client before the connection goes, then closes it
// after a moment (closing with unread input at once would send a reset that can destroy
// data the client has not read yet).
func (p *Proxy) closeConn(r *http.Request) {
	c, ok := r.Context().Value(connKey{}).(net.Conn)
	if !ok {
		return
	}
	if tc, ok := c.(*tls.Conn); ok {
		_ = tc.CloseWrite()
	}
	t := time.NewTimer(200 * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
	case <-p.closed:
	}
	_ = c.Close()
}

// abort ends the handler without a complete response: the connection is closed (HTTP/1)
// or the stream reset (HTTP/2).
func abort() { panic(http.ErrAbortHandler) }
