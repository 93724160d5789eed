package projection

import (
	"fmt"
	"io"
	"unicode/utf16"
	"unicode/utf8"
)

// jsonMaxDepth is how deeply objects and arrays may nest in a filtered
// document, the same bound encoding/json applies.
const jsonMaxDepth = 10000

// jsonError is a malformed (or unfilterable) JSON input. off is the byte
// offset in the input where the problem was found.
type jsonError struct {
	msg       string
	off       int64
	truncated bool
}

func (e *jsonError) Error() string {
	if e.truncated {
		return "projection: unexpected end of JSON input"
	}
	return fmt.Sprintf("projection: %s at offset %d", e.msg, e.off)
}

// Unwrap makes a truncated input match io.ErrUnexpectedEOF.
func (e *jsonError) Unwrap() error {
	if e.truncated {
		return io.ErrUnexpectedEOF
	}
	return nil
}

// rebaseJSONError shifts the offset of a jsonError found in a buffer that
// starts base bytes into a stream.
func rebaseJSONError(err error, base int64) error {
	if e, ok := err.(*jsonError); ok {
		e.off += base
	}
	return err
}

// allNode keeps a whole value; emptyNode keeps nothing of an object.
var (
	allNode   = &node{all: true}
	emptyNode = &node{}
)

// objectLevel tells filterObject which object of a Kubernetes object it is
// in, for the marker annotation's sake.
type objectLevel int

const (
	levelPlain       objectLevel = iota
	levelTop                     // the object itself: its metadata gets the marker
	levelMetadata                // its metadata: the annotations get the marker
	levelAnnotations             // its annotations: the marker is replaced
)

// jsonScanner walks one JSON document held in memory, validating it, and
// copies the members a projection keeps.
type jsonScanner struct {
	src         []byte
	pos         int
	fingerprint string
	scratch     []byte // a key or string value with its escapes resolved
}

func (s *jsonScanner) fail(msg string) error {
	if s.pos >= len(s.src) {
		return &jsonError{truncated: true, off: int64(len(s.src))}
	}
	return &jsonError{msg: msg, off: int64(s.pos)}
}

func (s *jsonScanner) failChar(context string) error {
	if s.pos >= len(s.src) {
		return s.fail("")
	}
	return s.fail(fmt.Sprintf("invalid character %q %s", s.src[s.pos], context))
}

func (s *jsonScanner) skipSpace() {
	for s.pos < len(s.src) {
		switch s.src[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// peek returns the next byte after whitespace, or 0 at the end.
func (s *jsonScanner) peek() byte {
	s.skipSpace()
	if s.pos < len(s.src) {
		return s.src[s.pos]
	}
	return 0
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// scanString moves past the string starting at pos (on its quote). plain
// reports that it holds neither escapes nor non-ASCII bytes, so that its
// bytes are its value.
func (s *jsonScanner) scanString() (plain bool, err error) {
	src := s.src
	plain = true
	i := s.pos + 1
	for i < len(src) {
		c := src[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < 0x80 {
			i++
			continue
		}
		switch {
		case c == '"':
			s.pos = i + 1
			return plain, nil
		case c == '\\':
			plain = false
			if i+1 >= len(src) {
				s.pos = len(src)
				return false, s.fail("")
			}
			switch src[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				for k := i + 2; k < i+6; k++ {
					if k >= len(src) {
						s.pos = len(src)
						return false, s.fail("")
					}
					if !isHexDigit(src[k]) {
						s.pos = k
						return false, s.failChar("in \\u escape")
					}
				}
				i += 6
			default:
				s.pos = i + 1
				return false, s.failChar("in string escape")
			}
		case c < 0x20:
			s.pos = i
			return false, s.fail(fmt.Sprintf("control character %#02x in string", c))
		default: // a byte of a multi-byte sequence
			plain = false
			i++
		}
	}
	s.pos = len(src)
	return false, s.fail("")
}

// scanNumber moves past the number starting at pos.
func (s *jsonScanner) scanNumber() error {
	src := s.src
	i := s.pos
	digits := func() error {
		if i >= len(src) {
			s.pos = i
			return s.fail("")
		}
		if src[i] < '0' || src[i] > '9' {
			s.pos = i
			return s.failChar("in number")
		}
		for i < len(src) && '0' <= src[i] && src[i] <= '9' {
			i++
		}
		return nil
	}
	if src[i] == '-' {
		i++
	}
	if i < len(src) && src[i] == '0' {
		i++
	} else if err := digits(); err != nil {
		return err
	}
	if i < len(src) && src[i] == '.' {
		i++
		if err := digits(); err != nil {
			return err
		}
	}
	if i < len(src) && (src[i] == 'e' || src[i] == 'E') {
		i++
		if i < len(src) && (src[i] == '+' || src[i] == '-') {
			i++
		}
		if err := digits(); err != nil {
			return err
		}
	}
	s.pos = i
	return nil
}

func (s *jsonScanner) scanLiteral(lit string) error {
	for k := 0; k < len(lit); k++ {
		if s.pos >= len(s.src) {
			return s.fail("")
		}
		if s.src[s.pos] != lit[k] {
			return s.failChar("in literal " + lit)
		}
		s.pos++
	}
	return nil
}

// skipValue validates the value at pos (after whitespace) and moves past
// it. depth is the number of containers around it.
func (s *jsonScanner) skipValue(depth int) error {
	switch c := s.peek(); c {
	case '{':
		if depth >= jsonMaxDepth {
			return s.fail(fmt.Sprintf("JSON nested deeper than %d levels", jsonMaxDepth))
		}
		s.pos++
		if s.peek() == '}' {
			s.pos++
			return nil
		}
		for {
			if s.peek() != '"' {
				return s.failChar("looking for the beginning of an object key")
			}
			if _, err := s.scanString(); err != nil {
				return err
			}
			if err := s.colon(); err != nil {
				return err
			}
			if err := s.skipValue(depth + 1); err != nil {
				return err
			}
			if more, err := s.next('}'); !more || err != nil {
				return err
			}
		}
	case '[':
		if depth >= jsonMaxDepth {
			return s.fail(fmt.Sprintf("JSON nested deeper than %d levels", jsonMaxDepth))
		}
		s.pos++
		if s.peek() == ']' {
			s.pos++
			return nil
		}
		for {
			if err := s.skipValue(depth + 1); err != nil {
				return err
			}
			if more, err := s.next(']'); !more || err != nil {
				return err
			}
		}
	case '"':
		_, err := s.scanString()
		return err
	case 't':
		return s.scanLiteral("true")
	case 'f':
		return s.scanLiteral("false")
	case 'n':
		return s.scanLiteral("null")
	default:
		if c == '-' || '0' <= c && c <= '9' {
			return s.scanNumber()
		}
		return s.failChar("looking for the beginning of a value")
	}
}

// colon moves past the colon after an object key.
func (s *jsonScanner) colon() error {
	if s.peek() != ':' {
		return s.failChar("after object key")
	}
	s.pos++
	return nil
}

// next moves past the comma or the closing bracket after a member or an
// element; more reports a comma.
func (s *jsonScanner) next(closing byte) (more bool, err error) {
	switch s.peek() {
	case ',':
		s.pos++
		return true, nil
	case closing:
		s.pos++
		return false, nil
	}
	if closing == '}' {
		return false, s.failChar("after object member")
	}
	return false, s.failChar("after array element")
}

// scanKey moves past the object key at pos. raw is the key as written,
// quotes included; key is its value, valid until the next scanKey or
// stringIs.
func (s *jsonScanner) scanKey() (raw, key []byte, err error) {
	if s.peek() != '"' {
		return nil, nil, s.failChar("looking for the beginning of an object key")
	}
	start := s.pos
	plain, err := s.scanString()
	if err != nil {
		return nil, nil, err
	}
	raw = s.src[start:s.pos]
	if plain {
		return raw, raw[1 : len(raw)-1], nil
	}
	if s.scratch == nil {
		s.scratch = make([]byte, 0, 64)
	}
	s.scratch = appendUnquoted(s.scratch[:0], raw[1:len(raw)-1])
	return raw, s.scratch, nil
}

// stringIs moves past the value at pos and reports whether it is the
// string want.
func (s *jsonScanner) stringIs(depth int, want string) (bool, error) {
	if s.peek() != '"' {
		return false, s.skipValue(depth)
	}
	_, key, err := s.scanKey()
	return string(key) == want, err
}

// appendUnquoted appends the value of the validated string contents q
// (without quotes), resolving escapes the way encoding/json does: a lone
// or mispaired surrogate and an invalid UTF-8 byte become U+FFFD.
func appendUnquoted(dst, q []byte) []byte {
	for i := 0; i < len(q); {
		c := q[i]
		if c == '\\' {
			switch e := q[i+1]; e {
			case 'u':
				r := hex4(q[i+2 : i+6])
				i += 6
				if utf16.IsSurrogate(r) {
					if i+6 <= len(q) && q[i] == '\\' && q[i+1] == 'u' {
						if d := utf16.DecodeRune(r, hex4(q[i+2:i+6])); d != utf8.RuneError {
							r = d
							i += 6
						} else {
							r = utf8.RuneError
						}
					} else {
						r = utf8.RuneError
					}
				}
				dst = utf8.AppendRune(dst, r)
				continue
			case 'b':
				c = '\b'
			case 'f':
				c = '\f'
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			default: // '"', '\\', '/'
				c = e
			}
			dst = append(dst, c)
			i += 2
			continue
		}
		if c < utf8.RuneSelf {
			dst = append(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(q[i:])
		if r == utf8.RuneError && size == 1 {
			dst = utf8.AppendRune(dst, utf8.RuneError)
		} else {
			dst = append(dst, q[i:i+size]...)
		}
		i += size
	}
	return dst
}

func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c <= '9':
			c -= '0'
		case c <= 'F':
			c -= 'A' - 10
		default:
			c -= 'a' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// appendJSONString appends s as a JSON string.
func appendJSONString(dst []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}

// appendMarker appends the marker annotation as an object member.
func (s *jsonScanner) appendMarker(dst []byte) []byte {
	dst = appendJSONString(dst, MarkerAnnotation)
	dst = append(dst, ':')
	return appendJSONString(dst, s.fingerprint)
}

// filterValue copies what n keeps of the value at pos and moves past it.
// Where n keeps the value whole, and for scalars, it is copied as written.
// n applies to every element of an array.
func (s *jsonScanner) filterValue(dst []byte, n *node, depth int) ([]byte, error) {
	c := s.peek()
	switch {
	case n.all || c != '{' && c != '[':
		start := s.pos
		if err := s.skipValue(depth); err != nil {
			return dst, err
		}
		return append(dst, s.src[start:s.pos]...), nil
	case c == '{':
		return s.filterObject(dst, n, depth, levelPlain)
	}
	if depth >= jsonMaxDepth {
		return dst, s.fail(fmt.Sprintf("JSON nested deeper than %d levels", jsonMaxDepth))
	}
	s.pos++
	dst = append(dst, '[')
	if s.peek() == ']' {
		s.pos++
		return append(dst, ']'), nil
	}
	for {
		var err error
		if dst, err = s.filterValue(dst, n, depth+1); err != nil {
			return dst, err
		}
		more, err := s.next(']')
		if err != nil {
			return dst, err
		}
		if !more {
			return append(dst, ']'), nil
		}
		dst = append(dst, ',')
	}
}

// filterObject copies the members n keeps of the object at pos (on its
// opening brace) and moves past it. At levelTop, levelMetadata and
// levelAnnotations it also leads to, and adds, the marker annotation.
func (s *jsonScanner) filterObject(dst []byte, n *node, depth int, level objectLevel) ([]byte, error) {
	if depth >= jsonMaxDepth {
		return dst, s.fail(fmt.Sprintf("JSON nested deeper than %d levels", jsonMaxDepth))
	}
	s.pos++
	dst = append(dst, '{')
	first, sawSpecial := true, false
	if s.peek() == '}' {
		s.pos++
	} else {
		for {
			raw, key, err := s.scanKey()
			if err != nil {
				return dst, err
			}
			special, drop := false, false
			switch level {
			case levelTop:
				special = string(key) == "metadata"
			case levelMetadata:
				special = string(key) == "annotations"
			case levelAnnotations:
				drop = string(key) == MarkerAnnotation
			}
			var child *node
			if n.all {
				child = allNode
			} else {
				child = n.children[string(key)]
			}
			if special && child == nil {
				child = emptyNode
			}
			if err := s.colon(); err != nil {
				return dst, err
			}
			if child == nil || drop {
				err = s.skipValue(depth + 1)
			} else {
				if !first {
					dst = append(dst, ',')
				}
				first = false
				dst = append(dst, raw...)
				dst = append(dst, ':')
				if special {
					sawSpecial = true
					dst, err = s.filterMarked(dst, child, depth+1, level+1)
				} else {
					dst, err = s.filterValue(dst, child, depth+1)
				}
			}
			if err != nil {
				return dst, err
			}
			more, err := s.next('}')
			if err != nil {
				return dst, err
			}
			if !more {
				break
			}
		}
	}
	if level != levelPlain && !sawSpecial {
		if !first {
			dst = append(dst, ',')
		}
		dst = s.appendMarkerPath(dst, level)
	}
	return append(dst, '}'), nil
}

// appendMarkerPath appends, inside an object at level, the member leading
// to the marker annotation: "metadata" at levelTop, "annotations" at
// levelMetadata, the marker itself at levelAnnotations.
func (s *jsonScanner) appendMarkerPath(dst []byte, level objectLevel) []byte {
	switch level {
	case levelTop:
		dst = append(dst, `"metadata":{"annotations":{`...)
		dst = s.appendMarker(dst)
		return append(dst, "}}"...)
	case levelMetadata:
		dst = append(dst, `"annotations":{`...)
		dst = s.appendMarker(dst)
		return append(dst, '}')
	}
	return s.appendMarker(dst)
}

// filterMarked filters the metadata (level levelMetadata) or annotations
// (levelAnnotations) at pos, which must be an object or null; null becomes
// an object holding what leads to the marker.
func (s *jsonScanner) filterMarked(dst []byte, n *node, depth int, level objectLevel) ([]byte, error) {
	switch s.peek() {
	case '{':
		return s.filterObject(dst, n, depth, level)
	case 'n':
		if err := s.scanLiteral("null"); err != nil {
			return dst, err
		}
		dst = append(dst, '{')
		dst = s.appendMarkerPath(dst, level)
		return append(dst, '}'), nil
	}
	if level == levelMetadata {
		return dst, s.fail("metadata is neither an object nor null")
	}
	return dst, s.fail("metadata.annotations is neither an object nor null")
}

// isStatus reports whether the object at pos, inside depth containers, has
// the member "kind":"Status", reading no further than that member. It
// leaves pos where it was.
func (s *jsonScanner) isStatus(depth int) (bool, error) {
	start := s.pos
	defer func() { s.pos = start }()
	if s.peek() != '{' {
		return false, s.failChar("looking for the beginning of an object")
	}
	s.pos++
	if s.peek() == '}' {
		return false, nil
	}
	for {
		_, key, err := s.scanKey()
		if err != nil {
			return false, err
		}
		if err := s.colon(); err != nil {
			return false, err
		}
		if string(key) == "kind" {
			return s.stringIs(depth+1, "Status")
		}
		if err := s.skipValue(depth + 1); err != nil {
			return false, err
		}
		if more, err := s.next('}'); !more || err != nil {
			return false, err
		}
	}
}

// filterKubeObject copies the projection of the Kubernetes object at pos
// and moves past it. With statusAsIs, a Status object is copied as is.
func (s *jsonScanner) filterKubeObject(dst []byte, root *node, depth int, statusAsIs bool) ([]byte, error) {
	if s.peek() != '{' {
		return dst, s.failChar("looking for the beginning of an object")
	}
	if statusAsIs {
		status, err := s.isStatus(depth)
		if err != nil {
			return dst, err
		}
		if status {
			start := s.pos
			if err := s.skipValue(depth); err != nil {
				return dst, err
			}
			return append(dst, s.src[start:s.pos]...), nil
		}
	}
	return s.filterObject(dst, root, depth, levelTop)
}

// end checks that only whitespace follows the document.
func (s *jsonScanner) end() error {
	if s.peek(); s.pos < len(s.src) {
		return s.failChar("after top-level value")
	}
	return nil
}

// filterJSONObject appends to dst the projection of the Kubernetes object
// src by root: the members root keeps, copied as written, plus the marker
// annotation with value fingerprint (replacing any marker src carries). A
// Status object is appended unchanged. On error dst is returned as it was.
func filterJSONObject(dst, src []byte, root *node, fingerprint string) ([]byte, error) {
	s := jsonScanner{src: src, fingerprint: fingerprint}
	n0 := len(dst)
	s.skipSpace()
	status, err := s.isStatus(0)
	if err != nil {
		return dst[:n0], err
	}
	if status {
		if err := s.skipValue(0); err != nil {
			return dst[:n0], err
		}
		if err := s.end(); err != nil {
			return dst[:n0], err
		}
		return append(dst, src...), nil
	}
	dst, err = s.filterObject(dst, root, 0, levelTop)
	if err == nil {
		err = s.end()
	}
	if err != nil {
		return dst[:n0], err
	}
	return dst, nil
}
