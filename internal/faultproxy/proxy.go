// Package faultproxy is an HTTPS reverse proxy on 127.0.0.1 that sits between a Kubernetes
// client and a real kube-apiserver (internal/testenv's, usually) and injects faults into the
// requests it forwards, on command and deterministically: closed connections, black-holed
// watches, 410 Gone, 429 with Retry-After, 500, 503, watch frames cut in half, garbage
// bytes, events of the wrong type, events without an object, bookmarks without a
// resourceVersion, and delays.
//
// The proxy terminates TLS with a certificate of its own (Config returns a rest.Config that
// trusts it) and forwards every request to the server over TLS with the server's CA,
// passing the client's Authorization header through unchanged: bearer tokens keep working,
// and a wrong token gets the server's own 401.
//
// Faults are installed as Rules: a Match (verb, resource, namespace, predicate, probability
// drawn from a seeded source) and a Fault, for the next Times matching requests or until
// removed. Rules are tried in the order they were installed; the first that matches decides.
// A request that no rule matches is forwarded untouched (responses are streamed, flushed as
// they arrive, decompressed).
package faultproxy

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// Options tunes a proxy. The zero value is usable.
type Options struct {
	// Seed seeds the source of Match.Probability draws.
	Seed uint64
	// HTTP1Only turns HTTP/2 off on the client side, so that every request has its own
	// connection and CloseConn cuts only the request it matched.
	HTTP1Only bool
	// OnRequest, when not nil, is called for every request with what the proxy understood
	// of it and the fault a rule picked (nil when forwarded untouched). It must return
	// quickly.
	OnRequest func(info RequestInfo, f *Fault)
}

// Proxy is a running fault-injecting proxy. Its methods are safe for concurrent use.
type Proxy struct {
	upstream  *rest.Config
	target    string // scheme://host of the server
	transport *http.Transport
	srv       *http.Server
	ln        net.Listener
	certPEM   []byte
	closed    chan struct{}
	closeOnce sync.Once
	serveDone chan struct{}
	handlers  sync.WaitGroup
	onRequest func(RequestInfo, *Fault)

	mu       sync.Mutex
	closing  bool
	rnd      *rand.Rand
	rules    []*Injection
	counts   map[Kind]int
	requests map[Verb]int
	conns    map[net.Conn]struct{}
	active   map[*activeRequest]struct{}
}

// activeRequest is a request being served, which CutActive can cut.
type activeRequest struct {
	info   RequestInfo
	ctx    context.Context
	cancel context.CancelFunc
	cut    atomic.Bool
}

type connKey struct{}

// New starts a proxy on a free port of 127.0.0.1 in front of the server upstream points
// at. upstream's TLS settings (CA, client certificates) are used to reach the server; its
// credentials are not: clients send their own. The caller must Close the proxy.
func New(upstream *rest.Config, opts Options) (*Proxy, error) {
	if upstream == nil {
		return nil, errors.New("faultproxy: no upstream config")
	}
	tlsCfg, err := rest.TLSConfigFor(upstream)
	if err != nil {
		return nil, fmt.Errorf("faultproxy: TLS settings of the upstream %s: %w", upstream.Host, err)
	}
	hostURL, _, err := rest.DefaultServerUrlFor(upstream)
	if err != nil {
		return nil, fmt.Errorf("faultproxy: upstream host %q: %w", upstream.Host, err)
	}
	cert, certPEM, err := selfSignedCert()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("faultproxy: listening: %w", err)
	}
	p := &Proxy{
		upstream: rest.CopyConfig(upstream),
		target:   hostURL.Scheme + "://" + hostURL.Host,
		transport: &http.Transport{
			TLSClientConfig:     tlsCfg,
			ForceAttemptHTTP2:   true,
			MaxIdleConnsPerHost: 64,
			IdleConnTimeout:     30 * time.Second,
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		},
		ln:        ln,
		onRequest: opts.OnRequest,
		certPEM:   certPEM,
		closed:    make(chan struct{}),
		serveDone: make(chan struct{}),
		rnd:       rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15)),
		counts:    map[Kind]int{},
		requests:  map[Verb]int{},
		conns:     map[net.Conn]struct{}{},
		active:    map[*activeRequest]struct{}{},
	}
	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	protocols.SetHTTP2(!opts.HTTP1Only)
	p.srv = &http.Server{
		Handler:   http.HandlerFunc(p.serve),
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		Protocols: protocols,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return context.WithValue(ctx, connKey{}, c)
		},
		ConnState: p.trackConn,
		ErrorLog:  nil,
	}
	go func() {
		defer close(p.serveDone)
		_ = p.srv.ServeTLS(ln, "", "")
	}()
	return p, nil
}

// URL is the proxy's base URL (https://127.0.0.1:port).
func (p *Proxy) URL() string { return "https://" + p.ln.Addr().String() }

// Config returns a copy of the upstream config (its credentials included) pointing at the
// proxy and trusting the proxy's certificate.
func (p *Proxy) Config() *rest.Config { return p.ConfigFor(p.upstream) }

// ConfigFor returns a copy of cfg (any credentials, content type, rate limits) pointing at
// the proxy and trusting the proxy's certificate.
func (p *Proxy) ConfigFor(cfg *rest.Config) *rest.Config {
	out := rest.CopyConfig(cfg)
	out.Host = p.URL()
	out.APIPath = cfg.APIPath
	out.TLSClientConfig = rest.TLSClientConfig{CAData: append([]byte(nil), p.certPEM...)}
	return out
}

// Inject installs rule and returns its handle. Rules are tried in installation order.
func (p *Proxy) Inject(rule Rule) *Injection {
	in := &Injection{rule: rule, proxy: p, done: make(chan struct{})}
	p.mu.Lock()
	p.rules = append(p.rules, in)
	p.mu.Unlock()
	return in
}

// Clear removes every rule.
func (p *Proxy) Clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.rules) > 0 {
		p.removeLocked(p.rules[0])
	}
}

func (p *Proxy) removeLocked(in *Injection) {
	if in.removed {
		return
	}
	in.removed = true
	for i, r := range p.rules {
		if r == in {
			p.rules = append(p.rules[:i:i], p.rules[i+1:]...)
			break
		}
	}
	in.finish()
}

// Counts returns how many requests each kind of fault was applied to (CloseAll's cuts count
// as CloseConn).
func (p *Proxy) Counts() map[Kind]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[Kind]int, len(p.counts))
	for k, v := range p.counts {
		out[k] = v
	}
	return out
}

// Requests returns how many requests of each verb the proxy received.
func (p *Proxy) Requests() map[Verb]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[Verb]int, len(p.requests))
	for k, v := range p.requests {
		out[k] = v
	}
	return out
}

// CloseAll closes every client connection open right now, as a network blip would, and
// returns how many it closed. Each counts as one CloseConn.
func (p *Proxy) CloseAll() int {
	p.mu.Lock()
	conns := make([]net.Conn, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
	}
	p.counts[CloseConn] += len(conns)
	p.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
	return len(conns)
}

// CutActive cuts every request being served right now that m selects (m.Probability is
// ignored): the response ends abruptly, as if the connection broke (over HTTP/2 only that
// stream is reset; over HTTP/1 its connection is closed). It returns how many it cut;
// each counts as one CloseConn. Use it to force clients to open new watches, which then
// meet the rules installed before.
func (p *Proxy) CutActive(m Match) int {
	m.Probability = 0
	p.mu.Lock()
	var cut []*activeRequest
	for a := range p.active {
		if m.matches(a.info) {
			cut = append(cut, a)
		}
	}
	p.counts[CloseConn] += len(cut)
	p.mu.Unlock()
	for _, a := range cut {
		a.cut.Store(true)
		a.cancel()
	}
	return len(cut)
}

// EndActive ends every request being served right now that m selects (m.Probability is
// ignored) the way kube-apiserver ends a watch whose timeout has passed: the response is
// completed normally, so a watch client sees the end of its stream, not an error. It
// returns how many it ended; they are not counted as faults. Use it to make clients
// reopen their watches from their last resourceVersion (a cut watch, see CutActive, is
// an error, after which an informer relists instead). A request still waiting for the
// server's response headers gets an empty 200 response.
func (p *Proxy) EndActive(m Match) int {
	m.Probability = 0
	p.mu.Lock()
	var ended []*activeRequest
	for a := range p.active {
		if m.matches(a.info) {
			ended = append(ended, a)
		}
	}
	p.mu.Unlock()
	for _, a := range ended {
		a.cancel()
	}
	return len(ended)
}

// Active returns how many requests that m selects are being served right now
// (m.Probability is ignored).
func (p *Proxy) Active(m Match) int {
	m.Probability = 0
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for a := range p.active {
		if m.matches(a.info) {
			n++
		}
	}
	return n
}

// Close stops the proxy: it closes the listener and every connection, ends black holes,
// and waits for every request handler to return. Idempotent.
func (p *Proxy) Close() error {
	var err error
	p.closeOnce.Do(func() {
		p.mu.Lock()
		p.closing = true
		p.mu.Unlock()
		err = p.srv.Close()
		close(p.closed)
		<-p.serveDone
		p.handlers.Wait()
		p.transport.CloseIdleConnections()
		p.mu.Lock()
		for _, in := range p.rules {
			in.finish()
		}
		p.mu.Unlock()
	})
	return err
}

func (p *Proxy) trackConn(c net.Conn, state http.ConnState) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch state {
	case http.StateNew:
		p.conns[c] = struct{}{}
	case http.StateClosed, http.StateHijacked:
		delete(p.conns, c)
	}
}

// pick returns the fault for a request, or nil, and counts it.
func (p *Proxy) pick(info RequestInfo) *Fault {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.requests[info.Verb]++
	for _, in := range p.rules {
		if !in.rule.Match.matches(info) {
			continue
		}
		if prob := in.rule.Match.Probability; prob > 0 && prob < 1 && p.rnd.Float64() >= prob {
			continue
		}
		in.fired++
		if in.rule.Times > 0 && in.fired >= in.rule.Times {
			p.removeLocked(in)
		}
		f := in.rule.Fault
		return &f
	}
	return nil
}

func (p *Proxy) count(k Kind) {
	p.mu.Lock()
	p.counts[k]++
	p.mu.Unlock()
}

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
