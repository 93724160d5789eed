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
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

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
