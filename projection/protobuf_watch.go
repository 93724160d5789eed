package projection

import (
	"encoding/binary"
	"fmt"
	"io"
)

// pbWatchFilter filters a protobuf watch stream: a sequence of frames, each
// a 4-byte big-endian length and a metav1.WatchEvent message.
type pbWatchFilter struct {
	rc          io.ReadCloser
	plan        *pbPlan
	fingerprint string

	in  []byte // the frame being filtered, reused
	out []byte // the filtered frame, reused
	off int    // how much of out was read
	err error  // sticky: returned once out is drained
}

// newProtobufWatchFilter returns the protobuf watch stream rc with the
// object of each event filtered by plan's filterObject (so an ERROR event's
// Status passes through, and a BOOKMARK keeps the annotation ending the
// initial events). Frames are read one at a time. Closing the returned
// reader closes rc.
func newProtobufWatchFilter(rc io.ReadCloser, plan *pbPlan, fingerprint string) io.ReadCloser {
	return &pbWatchFilter{rc: rc, plan: plan, fingerprint: fingerprint}
}

// Read returns the filtered frames' bytes, in as many calls as the size of
// b requires. It returns io.EOF where the input ends between two frames,
// io.ErrUnexpectedEOF where it ends inside one (and any other error of the
// underlying stream as it is), and a "projection:" error for a malformed
// frame or one larger than 16 MiB (pbMaxWatchFrame).
func (w *pbWatchFilter) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	for w.off == len(w.out) {
		if w.err != nil {
			return 0, w.err
		}
		if cap(w.out) > pbWatchKeepBuffer {
			w.out = nil
		}
		w.err = w.next()
	}
	n := copy(b, w.out[w.off:])
	w.off += n
	return n, nil
}

// Close closes the underlying stream.
func (w *pbWatchFilter) Close() error {
	return w.rc.Close()
}

// next reads one frame and puts it, filtered, in w.out.
func (w *pbWatchFilter) next() error {
	var hdr [4]byte
	if _, err := io.ReadFull(w.rc, hdr[:]); err != nil {
		// io.EOF between frames, io.ErrUnexpectedEOF inside one, or the
		// connection's error: returned as they are, because client-go's
		// watch decoder tells a closed stream (which the reflector reopens
		// from its resourceVersion) from a failure by comparing the error
		// with io.EOF and io.ErrUnexpectedEOF.
		return err
	}
	size := binary.BigEndian.Uint32(hdr[:])
	if size > pbMaxWatchFrame {
		return fmt.Errorf("projection: protobuf watch: a frame of %d bytes is larger than %d bytes", size, pbMaxWatchFrame)
	}
	var err error
	if w.in, err = pbReadFull(w.rc, w.in, int(size)); err != nil {
		// Unwrapped, as above.
		return err
	}
	out := append(w.out[:0], 0, 0, 0, 0)
	if out, err = w.plan.filterEvent(out, w.in, w.fingerprint); err != nil {
		w.out, w.off = w.out[:0], 0
		return err
	}
	if len(out)-4 > pbMaxWatchFrame {
		return fmt.Errorf("projection: protobuf watch: a filtered frame of %d bytes is larger than %d bytes", len(out)-4, pbMaxWatchFrame)
	}
	binary.BigEndian.PutUint32(out, uint32(len(out)-4))
	w.out, w.off = out, 0
	if cap(w.in) > pbWatchKeepBuffer {
		// One large object must not pin its buffer for the watch's life.
		w.in = nil
	}
	return nil
}

// pbMaxWatchFrame bounds one frame of a protobuf watch stream, as
// jsonMaxWatchFrame bounds a JSON event: 16 MiB, where client-go's own watch
// decoder (apimachinery's streaming decoder) stops, so that a server or
// proxy announcing a huge frame cannot make the filter buffer it.
const pbMaxWatchFrame = 16 << 20

// pbWatchKeepBuffer is the largest buffer a watch filter keeps between
// frames.
const pbWatchKeepBuffer = 1 << 20

// filterEvent appends the metav1.WatchEvent message ev with its object
// filtered by filterObject. Other fields are kept.
func (p *pbPlan) filterEvent(dst, ev []byte, fingerprint string) ([]byte, error) {
	for len(ev) > 0 {
		f, err := pbNextField(ev)
		if err != nil {
			return dst, fmt.Errorf("projection: protobuf watch event: %w", err)
		}
		ev = ev[len(f.raw):]
		switch f.num {
		case pbEventType, pbEventObject:
			if err := pbCheckWire(f, pbWireBytes, false); err != nil {
				return dst, fmt.Errorf("projection: protobuf watch event: %w", err)
			}
		}
		if f.num != pbEventObject {
			dst = append(dst, f.raw...)
			continue
		}
		var at, room int
		dst, at, room = pbBeginNested(dst, pbEventObject, len(f.value)+len(MarkerAnnotation)+len(fingerprint)+16)
		for ext := f.value; len(ext) > 0; {
			xf, err := pbNextField(ext)
			if err != nil {
				return dst, fmt.Errorf("projection: protobuf watch event: object: %w", err)
			}
			ext = ext[len(xf.raw):]
			if xf.num != pbRawExtRaw || len(xf.value) == 0 && xf.wt == pbWireBytes {
				dst = append(dst, xf.raw...)
				continue
			}
			if err := pbCheckWire(xf, pbWireBytes, false); err != nil {
				return dst, fmt.Errorf("projection: protobuf watch event: object: %w", err)
			}
			odst, oat, oroom := pbBeginNested(dst, pbRawExtRaw, len(xf.value)+len(MarkerAnnotation)+len(fingerprint)+8)
			if odst, err = p.filterObject(odst, xf.value, fingerprint); err != nil {
				return odst, fmt.Errorf("%w (in a watch event)", err)
			}
			dst = pbEndNested(odst, oat, oroom)
		}
		dst = pbEndNested(dst, at, room)
	}
	return dst, nil
}
