package listadmission

import (
	"math"
	"net/http"
	"strconv"
	"time"
)

// WrapTransport returns a RoundTripper that passes requests to rt and
// reports to a every 429 answering one of its informers' own collection
// reads: a LIST or streaming list whose request context carries a slot of a
// (ContextWithSlot; the Reflectors of the informers sharing a put it
// there), with the Retry-After header it carries (capped at
// Options.MaxRetryAfter; see ParseRetryAfter). Every other 429 goes through
// unseen: those answering a GET of one object, a list the application makes
// with the same client, another admission's lists, writes and plain
// watches. client-go's REST client retries a 429 by itself (up to ten
// times, sleeping its whole Retry-After before each) before an informer
// sees it, so wrapping the transport of the informers' client
// (rest.Config.Wrap(admission.WrapTransport)) lets the whole group slow down
// at the first one. The response and error of rt are returned unchanged. A
// nil a returns rt. kinformer extension.
//
// Difference from earlier kinformer versions: any 429 to a GET that was no
// watch used to pause the group, so that one GET of an aggregated API
// answered with a Retry-After of a year stopped every informer's relists.
func (a *Admission) WrapTransport(rt http.RoundTripper) http.RoundTripper {
	if a == nil {
		return rt
	}
	return &transport{a: a, next: rt}
}

// transport is the RoundTripper WrapTransport returns.
type transport struct {
	a    *Admission
	next http.RoundTripper
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp == nil || resp.StatusCode != http.StatusTooManyRequests || !isListRequest(req) {
		return resp, err
	}
	// Only the lists of a's own informers carry one of its slots.
	if slot := slotFrom(req.Context(), t.a); slot != nil {
		d, _ := ParseRetryAfter(resp.Header.Get("Retry-After"))
		t.a.throttle(d, slot)
	}
	return resp, err
}

// ParseRetryAfter parses the value of a Retry-After header as kinformer
// honours it: a whole number of seconds above zero, in decimal, as
// client-go's REST client reads it (strconv.Atoi: a leading sign is
// allowed, spaces are not). Anything else (empty, an HTTP date, a
// fraction, zero or less, more seconds than a time.Duration holds) returns
// 0 and false; the caller then applies its default. The result is not
// capped: callers cap it at their MaxRetryAfter. kinformer extension.
func ParseRetryAfter(value string) (time.Duration, bool) {
	seconds, err := strconv.ParseInt(value, 10, 64)
	if err != nil || seconds <= 0 || seconds > int64(math.MaxInt64/time.Second) {
		return 0, false
	}
	return time.Duration(seconds) * time.Second, true
}

// isListRequest reports whether req reads a collection: a GET that is no
// watch, or a streaming list (a watch sending initial events).
func isListRequest(req *http.Request) bool {
	if req.Method != http.MethodGet {
		return false
	}
	q := req.URL.Query()
	if w := q.Get("watch"); w != "true" && w != "1" {
		return true
	}
	return q.Get("sendInitialEvents") == "true"
}
