package pbdecode

import (
	"fmt"
	"io"
	"reflect"
	"sync"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// activeVerification is the Verification the serializers of
// NewNegotiatedSerializer report to, or nil (the default): one atomic load
// per decoded object is all verification costs while it is off. It is the
// package's one piece of mutable state, for tests only (StartVerification).
var activeVerification atomic.Pointer[Verification]

// Verification is a check, for tests, that the serializers of
// NewNegotiatedSerializer decode as apimachinery does on real traffic:
// while it is active, every object they decode with the generated decoders
// is decoded again by the wrapped apimachinery serializer from the same
// bytes and compared (object with reflect.DeepEqual, group-version-kind,
// error-ness), every failure of a generated decoder is checked to be one of
// apimachinery's too, and every watch event read without copying is read
// again by apimachinery and compared. It records each difference. Its
// methods are safe for concurrent use.
type Verification struct {
	decoded atomic.Int64
	events  atomic.Int64

	mu          sync.Mutex
	differences []string
}

// StartVerification activates a Verification for every serializer of
// NewNegotiatedSerializer in the process and returns it, with the function
// that deactivates it. When one is active already, it returns that one and
// a stop that does nothing, so that a test may start one inside a test
// binary whose TestMain verifies everything. Verification doubles the
// decoding work: tests only.
func StartVerification() (v *Verification, stop func()) {
	fresh := &Verification{}
	if activeVerification.CompareAndSwap(nil, fresh) {
		return fresh, func() { activeVerification.CompareAndSwap(fresh, nil) }
	}
	if v := activeVerification.Load(); v != nil {
		return v, func() {}
	}
	// Stopped between the two loads: try again.
	return StartVerification()
}

// Decoded returns how many objects (a list counting as one) the generated
// decoders decoded, and were compared, since v started.
func (v *Verification) Decoded() int64 { return v.decoded.Load() }

// WatchEvents returns how many watch event frames were read without
// copying, and compared, since v started.
func (v *Verification) WatchEvents() int64 { return v.events.Load() }

// Differences returns a description of every difference from apimachinery
// found since v started, in the order found; none when the decoders agreed
// on everything.
func (v *Verification) Differences() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]string(nil), v.differences...)
}

// differ records a difference.
func (v *Verification) differ(format string, args ...any) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.differences = append(v.differences, fmt.Sprintf(format, args...))
}

// apimachineryDecode decodes data with apimachinery's serializer base into
// a new value of into's type (nil when into is nil), as the serializer
// would decode into into.
func apimachineryDecode(base runtime.Decoder, data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	var fresh runtime.Object
	if into != nil {
		fresh = reflect.New(reflect.TypeOf(into).Elem()).Interface().(runtime.Object)
	}
	return base.Decode(data, defaults, fresh)
}

// checkObject compares obj and actual, what the generated decoder made of
// data, with what base makes of it.
func (v *Verification) checkObject(base runtime.Decoder, data []byte, defaults *schema.GroupVersionKind, into, obj runtime.Object, actual schema.GroupVersionKind) {
	v.decoded.Add(1)
	want, wantGVK, err := apimachineryDecode(base, data, defaults, into)
	switch {
	case err != nil:
		v.differ("%T (%s, %d bytes): the generated decoder decodes, apimachinery fails: %v", obj, actual, len(data), err)
	case wantGVK == nil || *wantGVK != actual:
		v.differ("%T (%d bytes): group-version-kind %s, apimachinery's %v", obj, len(data), actual, wantGVK)
	case !reflect.DeepEqual(want, obj):
		v.differ("%T (%s, %d bytes): decoded differently from apimachinery in %v", obj, actual, len(data), differingFields(want, obj))
	}
}

// checkFailure checks that base fails on data too, as the generated
// decoder did with err.
func (v *Verification) checkFailure(base runtime.Decoder, data []byte, defaults *schema.GroupVersionKind, into runtime.Object, err error) {
	if want, _, refErr := apimachineryDecode(base, data, defaults, into); refErr == nil {
		v.differ("%T (%d bytes): the generated decoder fails (%v), apimachinery decodes", want, len(data), err)
	}
}

// checkWatchEvent compares got and actual, what was read of the frame data,
// with what base reads of it.
func (v *Verification) checkWatchEvent(base runtime.Decoder, data []byte, defaults *schema.GroupVersionKind, got *metav1.WatchEvent, actual schema.GroupVersionKind) {
	v.events.Add(1)
	want := &metav1.WatchEvent{}
	_, wantGVK, err := base.Decode(data, defaults, want)
	switch {
	case err != nil:
		v.differ("watch event (%d bytes): read without copying, apimachinery fails: %v", len(data), err)
	case wantGVK == nil || *wantGVK != actual:
		v.differ("watch event (%d bytes): group-version-kind %s, apimachinery's %v", len(data), actual, wantGVK)
	case !reflect.DeepEqual(want, got):
		v.differ("watch event (%d bytes): read differently from apimachinery in %v", len(data), differingFields(want, got))
	}
}

// differingFields names the top-level fields in which want and got, two
// pointers to structs of one type, differ (or the types when they differ).
func differingFields(want, got any) []string {
	w, g := reflect.ValueOf(want), reflect.ValueOf(got)
	if w.Type() != g.Type() {
		return []string{fmt.Sprintf("type %s against %s", w.Type(), g.Type())}
	}
	w, g = reflect.Indirect(w), reflect.Indirect(g)
	if w.Kind() != reflect.Struct {
		return []string{w.Type().String()}
	}
	var fields []string
	for i := range w.NumField() {
		if !w.Type().Field(i).IsExported() {
			continue
		}
		if !reflect.DeepEqual(w.Field(i).Interface(), g.Field(i).Interface()) {
			fields = append(fields, w.Type().Field(i).Name)
		}
	}
	if len(fields) == 0 {
		fields = append(fields, "unexported fields")
	}
	return fields
}

// RunVerifying runs m (a test binary's *testing.M, or what wraps it) with a
// Verification active, for the TestMain of packages whose tests read
// objects from a real API server. It writes to w how many objects and watch
// frames were checked and every difference, and returns m's exit code, or
// 1 when a difference was recorded.
func RunVerifying(m interface{ Run() int }, w io.Writer) int {
	v, stop := StartVerification()
	code := m.Run()
	stop()
	diffs := v.Differences()
	fmt.Fprintf(w, "pbdecode: %d objects and %d watch frames decoded by the generated decoders, checked against apimachinery: %d differences\n",
		v.Decoded(), v.WatchEvents(), len(diffs))
	for _, d := range diffs {
		fmt.Fprintf(w, "pbdecode: %s\n", d)
	}
	if len(diffs) > 0 && code == 0 {
		code = 1
	}
	return code
}
