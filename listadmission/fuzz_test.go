package listadmission

import (
	"context"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"
)

// FuzzParseRetryAfter checks ParseRetryAfter against client-go's reading of
// the header (strconv.Atoi) on arbitrary values: it accepts exactly the
// values Atoi reads as a positive number of seconds a time.Duration holds,
// returns that many seconds, and whatever it returns, an Admission's pause
// after a 429 asking for it never exceeds DefaultMaxRetryAfter.
func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"1", "0", "-1", "+5", "120", "31536000", "9223372036", "9223372037",
		"99999999999999999999", "", " 1", "1 ", "1.5", "0x10", "Wed, 21 Oct 2015 07:28:00 GMT", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, value string) {
		got, ok := ParseRetryAfter(value)
		seconds, err := strconv.Atoi(value)
		wantOK := err == nil && seconds > 0 && int64(seconds) <= int64(1<<63-1)/int64(time.Second)
		if ok != wantOK {
			t.Fatalf("ParseRetryAfter(%q) ok = %v; client-go reads %d, %v", value, ok, seconds, err)
		}
		if !ok {
			if got != 0 {
				t.Fatalf("ParseRetryAfter(%q) = %v, false; want 0", value, got)
			}
			return
		}
		if got != time.Duration(seconds)*time.Second {
			t.Fatalf("ParseRetryAfter(%q) = %v; want %d s", value, got, seconds)
		}
		clk := testingclock.NewFakeClock(admissionClockStart)
		a := New(Options{MaxConcurrent: 1, Jitter: -1, Clock: clk, Rand: rand.New(rand.NewPCG(1, 1))})
		a.Throttled(got)
		if pause := a.Stats().PausedUntil.Sub(admissionClockStart); pause > DefaultMaxRetryAfter || pause <= 0 {
			t.Fatalf("Retry-After %q paused the group for %v; want (0, %v]", value, pause, DefaultMaxRetryAfter)
		}
	})
}

// fzIsCollectionRead is the model of the requests whose 429 may slow a
// Admission down: a GET that is no watch, or a streaming list, as
// kube-apiserver reads the watch and sendInitialEvents parameters.
func fzIsCollectionRead(method string, u *url.URL) bool {
	if method != http.MethodGet {
		return false
	}
	q, _ := url.ParseQuery(u.RawQuery)
	switch q.Get("watch") {
	case "true", "1":
		return q.Get("sendInitialEvents") == "true"
	}
	return true
}

// FuzzRequestClassification sends arbitrary requests, answered with an
// arbitrary status and Retry-After, through an Admission's transport,
// with or without one of its slots on the request context. Only a 429
// answering a collection read that carries the slot counts, and no
// Retry-After pauses the group for longer than the maximum.
func FuzzRequestClassification(f *testing.F) {
	f.Add("GET", "/api/v1/pods", true, 429, "5")
	f.Add("GET", "/api/v1/pods?watch=true", true, 429, "5")
	f.Add("GET", "/api/v1/pods?watch=1&sendInitialEvents=true", true, 429, "31536000")
	f.Add("GET", "/apis/metrics.k8s.io/v1beta1/namespaces/a/pods/p", false, 429, "31536000")
	f.Add("POST", "/api/v1/namespaces/a/pods", true, 429, "1")
	f.Add("GET", "/api/v1/pods?watch=false&watch=true", true, 200, "")
	f.Add("get", "/api/v1/pods?%zz", true, 429, "x")
	f.Fuzz(func(t *testing.T, method, target string, withSlot bool, status int, retryAfter string) {
		u, err := url.Parse("https://example.invalid" + target)
		if err != nil || !validMethod(method) {
			return
		}
		clk := testingclock.NewFakeClock(admissionClockStart)
		a := New(Options{MaxConcurrent: 1, Jitter: -1, Clock: clk, Rand: rand.New(rand.NewPCG(1, 1))})
		ctx := context.Background()
		var slot *Slot
		if withSlot {
			if slot, err = a.Acquire(ctx, 0); err != nil {
				t.Fatal(err)
			}
			ctx = ContextWithSlot(ctx, slot)
		}
		rt := a.WrapTransport(roundTripFunc(func(*http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: status, Header: http.Header{"Retry-After": {retryAfter}}}, nil
		}))
		req, err := http.NewRequestWithContext(ctx, method, u.String(), nil)
		if err != nil {
			return
		}
		if _, err := rt.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
		want := uint64(0)
		if status == http.StatusTooManyRequests && withSlot && fzIsCollectionRead(req.Method, req.URL) {
			want = 1
		}
		s := a.Stats()
		if s.Throttled != want {
			t.Fatalf("%s %s (slot %v) answered %d: throttled %d, want %d", method, target, withSlot, status, s.Throttled, want)
		}
		if pause := s.PausedUntil.Sub(admissionClockStart); !s.PausedUntil.IsZero() && pause > DefaultMaxRetryAfter {
			t.Fatalf("Retry-After %q paused the group for %v", retryAfter, pause)
		}
		slot.Release(true)
	})
}

// validMethod reports whether m is a method http.NewRequest accepts.
func validMethod(m string) bool {
	if m == "" {
		return false
	}
	for _, c := range m {
		if c <= ' ' || c >= 0x7f || c == '(' || c == ')' || c == '<' || c == '>' || c == '@' || c == ',' || c == ';' || c == ':' || c == '\\' || c == '"' || c == '/' || c == '[' || c == ']' || c == '?' || c == '=' || c == '{' || c == '}' {
			return false
		}
	}
	return true
}
