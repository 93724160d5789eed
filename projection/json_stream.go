package projection

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

const (
	// jsonMaxWatchFrame bounds one watch event.
	jsonMaxWatchFrame = 64 << 20
	// jsonMaxRecord bounds what filterJSONList keeps of a body's input to
	// return a Status unchanged; a larger Status is returned compacted.
	jsonMaxRecord = 1 << 20
	jsonReadSize  = 32 << 10
)

// jsonStream reads JSON values one at a time from a reader: it finds where
// a value ends (checking only strings and brackets; the value is validated
// when scanned) without holding more than that value.
type jsonStream struct {
	r   *bufio.Reader
	off int64 // bytes consumed so far

	stack []byte // closing brackets of the containers open in capture

	recording bool
	record    []byte // bytes consumed while recording
}

func newJSONStream(r io.Reader) *jsonStream {
	return &jsonStream{r: bufio.NewReaderSize(r, jsonReadSize)}
}

func (st *jsonStream) fail(msg string) error {
	return &jsonError{msg: msg, off: st.off}
}

func (st *jsonStream) failChar(c byte, context string) error {
	return st.fail(fmt.Sprintf("invalid character %q %s", c, context))
}

// truncated turns an end of input in the middle of a value into an error.
func truncated(err error, off int64) error {
	if err == io.EOF {
		return &jsonError{truncated: true, off: off}
	}
	return err
}

// buffered returns the bytes read ahead, reading more when there are none.
func (st *jsonStream) buffered() ([]byte, error) {
	if st.r.Buffered() == 0 {
		if _, err := st.r.Peek(1); err != nil {
			return nil, err
		}
	}
	b, _ := st.r.Peek(st.r.Buffered())
	return b, nil
}

// consume drops b, the first bytes read ahead.
func (st *jsonStream) consume(b []byte) {
	if st.recording {
		if len(st.record)+len(b) > jsonMaxRecord {
			st.recording, st.record = false, nil
		} else {
			st.record = append(st.record, b...)
		}
	}
	st.off += int64(len(b))
	_, _ = st.r.Discard(len(b))
}

// peek skips whitespace and returns the next byte, without consuming it.
// At the end of the input it returns io.EOF.
func (st *jsonStream) peek() (byte, error) {
	for {
		b, err := st.buffered()
		if err != nil {
			return 0, err
		}
		i := 0
		for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
			i++
		}
		st.consume(b[:i])
		if i < len(b) {
			return b[i], nil
		}
	}
}

// expect skips whitespace and consumes the byte c.
func (st *jsonStream) expect(c byte, context string) error {
	got, err := st.peek()
	if err != nil {
		return truncated(err, st.off)
	}
	if got != c {
		return st.failChar(got, context)
	}
	st.consume([]byte{c})
	return nil
}

// capture appends the next value (after whitespace) to buf and consumes
// it. A container or a string ends at its closing bracket or quote, a
// scalar at the first byte that cannot be part of it. depth is the number
// of containers around the value. With limit > 0 a value longer than limit
// bytes is an error.
func (st *jsonStream) capture(buf []byte, depth, limit int) ([]byte, error) {
	c, err := st.peek()
	if err != nil {
		return buf, truncated(err, st.off)
	}
	start := st.off
	scalar := c != '{' && c != '[' && c != '"'
	inString, escaped := false, false
	st.stack = st.stack[:0]
	for {
		b, err := st.buffered()
		if err != nil {
			if err == io.EOF && scalar && st.off > start {
				return buf, nil
			}
			return buf, truncated(err, st.off)
		}
		i, done := 0, false
	scan:
		for ; i < len(b); i++ {
			c := b[i]
			if inString {
				switch {
				case escaped:
					escaped = false
				case c == '\\':
					escaped = true
				case c == '"':
					inString = false
					if len(st.stack) == 0 {
						i++
						done = true
						break scan
					}
				}
				continue
			}
			if scalar {
				switch c {
				case ' ', '\t', '\n', '\r', ',', ':', ']', '}', '[', '{', '"':
					done = true
					break scan
				}
				continue
			}
			switch c {
			case '"':
				inString = true
			case '{', '[':
				if depth+len(st.stack) >= jsonMaxDepth {
					st.consume(b[:i])
					return buf, st.fail(fmt.Sprintf("JSON nested deeper than %d levels", jsonMaxDepth))
				}
				st.stack = append(st.stack, c+2) // '}' and ']' follow '{' and '[' by 2
			case '}', ']':
				if len(st.stack) == 0 || st.stack[len(st.stack)-1] != c {
					buf = append(buf, b[:i]...)
					st.consume(b[:i])
					return buf, st.failChar(c, "closing no open bracket of its kind")
				}
				st.stack = st.stack[:len(st.stack)-1]
				if len(st.stack) == 0 {
					i++
					done = true
					break scan
				}
			}
		}
		buf = append(buf, b[:i]...)
		st.consume(b[:i])
		if done {
			return buf, nil
		}
		if limit > 0 && len(buf) > limit {
			return buf, st.fail(fmt.Sprintf("value larger than %d bytes", limit))
		}
	}
}

// checkValue validates buf, one value captured base bytes into the input
// inside depth containers.
func checkValue(buf []byte, base int64, depth int) error {
	s := jsonScanner{src: buf}
	err := s.skipValue(depth)
	if err == nil {
		err = s.end()
	}
	return rebaseJSONError(err, base)
}

// filterJSONList reads a list body, {"kind":..., "metadata":{...},
// "items":[...]} with members in any order, and returns it with every item
// projected by root as filterJSONObject would (a Status item included).
// Members other than "items" are copied as written, and so is an "items"
// that is null. It holds at most one item's input at a time. A Status body
// is returned unchanged.
func filterJSONList(r io.Reader, root *node, fingerprint string) ([]byte, error) {
	st := newJSONStream(r)
	c, err := st.peek()
	if err != nil {
		return nil, truncated(err, st.off)
	}
	if c != '{' {
		return nil, st.failChar(c, "looking for the beginning of a list body object")
	}
	st.recording = true
	st.consume([]byte{'{'})
	out := []byte{'{'}
	var buf []byte
	status, filtered := false, false
	if c, err = st.peek(); err != nil {
		return nil, truncated(err, st.off)
	}
	if c == '}' {
		st.consume([]byte{'}'})
	} else {
		for first := true; ; first = false {
			if c, err = st.peek(); err != nil {
				return nil, truncated(err, st.off)
			}
			if c != '"' {
				return nil, st.failChar(c, "looking for the beginning of an object key")
			}
			base := st.off
			if buf, err = st.capture(buf[:0], 1, 0); err != nil {
				return nil, err
			}
			s := jsonScanner{src: buf}
			raw, key, err := s.scanKey()
			if err == nil {
				err = s.end()
			}
			if err != nil {
				return nil, rebaseJSONError(err, base)
			}
			isItems, isKind := string(key) == "items", string(key) == "kind"
			if !first {
				out = append(out, ',')
			}
			out = append(out, raw...)
			out = append(out, ':')
			if err := st.expect(':', "after object key"); err != nil {
				return nil, err
			}
			if c, err = st.peek(); err != nil {
				return nil, truncated(err, st.off)
			}
			if isItems && !status && c == '[' {
				st.recording, st.record = false, nil
				filtered = true
				if out, buf, err = st.filterItems(out, buf, root, fingerprint); err != nil {
					return nil, err
				}
			} else {
				if isItems && !status && c != 'n' {
					return nil, st.failChar(c, "looking for the beginning of the list's items (an array or null)")
				}
				base := st.off
				if buf, err = st.capture(buf[:0], 1, 0); err != nil {
					return nil, err
				}
				if err := checkValue(buf, base, 1); err != nil {
					return nil, err
				}
				if isKind {
					s := jsonScanner{src: buf}
					status, _ = s.stringIs(0, "Status")
				}
				out = append(out, buf...)
			}
			if c, err = st.peek(); err != nil {
				return nil, truncated(err, st.off)
			}
			if c == '}' {
				st.consume([]byte{'}'})
				break
			}
			if c != ',' {
				return nil, st.failChar(c, "after object member")
			}
			st.consume([]byte{','})
		}
	}
	recorded := st.recording
	st.recording = false
	if c, err := st.peek(); err != io.EOF {
		if err != nil {
			return nil, err
		}
		return nil, st.failChar(c, "after the list body")
	}
	if status && !filtered && recorded {
		return st.record, nil
	}
	return append(out, '}'), nil
}

// filterItems filters the items array starting at the next byte, an
// opening bracket, appending it to out. buf is scratch space for one item.
func (st *jsonStream) filterItems(out, buf []byte, root *node, fingerprint string) ([]byte, []byte, error) {
	st.consume([]byte{'['})
	out = append(out, '[')
	c, err := st.peek()
	if err != nil {
		return out, buf, truncated(err, st.off)
	}
	if c == ']' {
		st.consume([]byte{']'})
		return append(out, ']'), buf, nil
	}
	for i := 0; ; i++ {
		if c != '{' {
			return out, buf, st.failChar(c, fmt.Sprintf("looking for the beginning of list item %d (an object)", i))
		}
		base := st.off
		if buf, err = st.capture(buf[:0], 2, 0); err != nil {
			return out, buf, err
		}
		s := jsonScanner{src: buf, fingerprint: fingerprint}
		if out, err = s.filterKubeObject(out, root, 2, false); err == nil {
			err = s.end()
		}
		if err != nil {
			return out, buf, rebaseJSONError(err, base)
		}
		if c, err = st.peek(); err != nil {
			return out, buf, truncated(err, st.off)
		}
		switch c {
		case ']':
			st.consume([]byte{']'})
			return append(out, ']'), buf, nil
		case ',':
			st.consume([]byte{','})
			out = append(out, ',')
		default:
			return out, buf, st.failChar(c, "after array element")
		}
		if c, err = st.peek(); err != nil {
			return out, buf, truncated(err, st.off)
		}
	}
}

// jsonWatchFilter filters a JSON watch stream event by event.
type jsonWatchFilter struct {
	rc          io.ReadCloser
	st          *jsonStream
	root        *node
	fingerprint string
	maxFrame    int

	frame []byte // the event being filtered
	out   []byte // the filtered event, out[pos:] not yet read
	pos   int
	err   error
}

// newJSONWatchFilter returns the watch stream rc with the object of every
// event projected by root as filterJSONObject does, each event followed by
// a newline. Close closes rc.
func newJSONWatchFilter(rc io.ReadCloser, root *node, fingerprint string) io.ReadCloser {
	return &jsonWatchFilter{
		rc:          rc,
		st:          newJSONStream(rc),
		root:        root,
		fingerprint: fingerprint,
		maxFrame:    jsonMaxWatchFrame,
	}
}

func (w *jsonWatchFilter) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for w.pos >= len(w.out) {
		if w.err != nil {
			return 0, w.err
		}
		w.err = w.nextEvent()
	}
	n := copy(p, w.out[w.pos:])
	w.pos += n
	if w.pos == len(w.out) && cap(w.out) > jsonMaxRecord {
		w.out, w.pos = nil, 0
	}
	return n, nil
}

func (w *jsonWatchFilter) Close() error {
	return w.rc.Close()
}

// nextEvent reads and filters the next event into out.
func (w *jsonWatchFilter) nextEvent() error {
	c, err := w.st.peek()
	if err != nil {
		return err // io.EOF between events is the end of the stream
	}
	if c != '{' {
		return w.st.failChar(c, "looking for the beginning of a watch event")
	}
	base := w.st.off
	w.frame, err = w.st.capture(w.frame[:0], 0, w.maxFrame)
	if len(w.frame) > w.maxFrame {
		return fmt.Errorf("projection: watch event larger than %d bytes", w.maxFrame)
	}
	if je := (*jsonError)(nil); errors.As(err, &je) && je.truncated {
		// A stream cut inside an event (a dropped connection) ends with
		// io.ErrUnexpectedEOF itself, as an unfiltered stream's decoder
		// reports it: client-go's watch decoder compares with ==, and
		// reads it as a closed watch, not as a failure.
		return io.ErrUnexpectedEOF
	}
	if err != nil {
		return err
	}
	s := jsonScanner{src: w.frame, fingerprint: w.fingerprint}
	w.out, err = s.filterEvent(w.out[:0], w.root)
	if err == nil {
		err = s.end()
	}
	if cap(w.frame) > jsonMaxRecord {
		w.frame = nil
	}
	if err != nil {
		w.out, w.pos = w.out[:0], 0
		return rebaseJSONError(err, base)
	}
	w.out = append(w.out, '\n')
	w.pos = 0
	return nil
}

// filterEvent copies the watch event at pos with its "object" member
// filtered.
func (s *jsonScanner) filterEvent(dst []byte, root *node) ([]byte, error) {
	if s.peek() != '{' {
		return dst, s.failChar("looking for the beginning of a watch event")
	}
	s.pos++
	dst = append(dst, '{')
	if s.peek() == '}' {
		s.pos++
		return append(dst, '}'), nil
	}
	for first := true; ; first = false {
		raw, key, err := s.scanKey()
		if err != nil {
			return dst, err
		}
		isObject := string(key) == "object"
		if err := s.colon(); err != nil {
			return dst, err
		}
		if !first {
			dst = append(dst, ',')
		}
		dst = append(dst, raw...)
		dst = append(dst, ':')
		if isObject {
			dst, err = s.filterKubeObject(dst, root, 1, true)
		} else {
			dst, err = s.filterValue(dst, allNode, 1)
		}
		if err != nil {
			return dst, err
		}
		more, err := s.next('}')
		if err != nil {
			return dst, err
		}
		if !more {
			return append(dst, '}'), nil
		}
	}
}
