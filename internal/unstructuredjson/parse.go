package unstructuredjson

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// maxDepth is how deeply arrays and objects may nest, as encoding/json's
// scanner allows.
const maxDepth = 10000

// SyntaxError is returned for input that is not valid JSON, at the byte
// offset where the parser stopped.
type SyntaxError struct {
	Offset int
	msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("unstructuredjson: %s at offset %d", e.msg, e.Offset)
}

// errDepth is returned for arrays and objects nested deeper than maxDepth.
var errDepth = errors.New("unstructuredjson: exceeded max depth")

// parser builds the values of one JSON document: objects as
// map[string]any, arrays as []any, strings, int64 (an integer literal
// without '.' that ParseInt accepts) or float64 numbers, bools and nil, as
// apimachinery's JSON decoding (sigs.k8s.io/json with PreserveInts) builds
// them.
type parser struct {
	data  []byte
	i     int
	depth int

	// arena is the current object's string storage (see take).
	arena []byte
	// arenaHint is the size of the next arena chunk to reserve.
	arenaHint int
	// used is how many bytes the current object (or list item) took.
	used int

	keys keyCache

	// perItem tells array that its elements are list items.
	perItem bool

	// stack holds the elements of the arrays and objects being built, so
	// that each is allocated once at its final size.
	stack []any
	// keyStack holds the keys of the objects being built.
	keyStack []string
}

func (p *parser) syntaxError(msg string) error {
	return &SyntaxError{Offset: p.i, msg: msg}
}

func (p *parser) skipSpace() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// take copies b into the current object's storage and returns a string of
// it. Storage is reserved in chunks no larger than what the rest of the
// object's text could need, so an object keeps at most one partly used
// chunk.
func (p *parser) take(b []byte) string {
	n := len(b)
	if n == 0 {
		return ""
	}
	if cap(p.arena)-len(p.arena) < n {
		c := p.arenaHint
		if c < n {
			c = n
		}
		p.arena = make([]byte, 0, c)
		// The next chunk: twice this one, but no more than the strings the
		// rest of the text could still hold (a third of it: keys are
		// shared, and values come with quotes, keys and punctuation).
		p.arenaHint = max(min(2*c, maxChunk, (len(p.data)-p.i)/3), minChunk)
	}
	start := len(p.arena)
	p.arena = append(p.arena, b...)
	p.used += n
	return unsafe.String(&p.arena[start], n)
}

// value parses the value at p.i (after white space).
func (p *parser) value() (any, error) {
	p.skipSpace()
	if p.i >= len(p.data) {
		return nil, p.syntaxError("unexpected end of JSON input")
	}
	switch c := p.data[p.i]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		s, err := p.str(false)
		if err != nil {
			return nil, err
		}
		return s, nil
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	}
	return nil, p.syntaxError("invalid character looking for beginning of value")
}

func (p *parser) literal(lit string) error {
	if len(p.data)-p.i < len(lit) || string(p.data[p.i:p.i+len(lit)]) != lit {
		// Advance to the first byte that differs, for the offset.
		for j := 0; j < len(lit) && p.i < len(p.data) && p.data[p.i] == lit[j]; j++ {
			p.i++
		}
		if p.i >= len(p.data) {
			return p.syntaxError("unexpected end of JSON input")
		}
		return p.syntaxError("invalid character in literal")
	}
	p.i += len(lit)
	return nil
}

func (p *parser) object() (any, error) {
	p.depth++
	if p.depth > maxDepth {
		return nil, errDepth
	}
	p.i++ // '{'
	base := len(p.stack)
	p.skipSpace()
	if p.i < len(p.data) && p.data[p.i] == '}' {
		p.i++
		p.depth--
		return map[string]any{}, nil
	}
	for {
		p.skipSpace()
		if p.i >= len(p.data) {
			return nil, p.syntaxError("unexpected end of JSON input")
		}
		if p.data[p.i] != '"' {
			return nil, p.syntaxError("invalid character looking for beginning of object key string")
		}
		k, err := p.str(true)
		if err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.i >= len(p.data) {
			return nil, p.syntaxError("unexpected end of JSON input")
		}
		if p.data[p.i] != ':' {
			return nil, p.syntaxError("invalid character after object key")
		}
		p.i++
		var v any
		if p.depth == 1 && k == "items" {
			v, err = p.items()
		} else {
			v, err = p.value()
		}
		if err != nil {
			return nil, err
		}
		p.keyStack = append(p.keyStack, k)
		p.stack = append(p.stack, v)
		p.skipSpace()
		if p.i >= len(p.data) {
			return nil, p.syntaxError("unexpected end of JSON input")
		}
		c := p.data[p.i]
		p.i++
		if c == '}' {
			break
		}
		if c != ',' {
			p.i--
			return nil, p.syntaxError("invalid character after object key:value pair")
		}
	}
	n := len(p.stack) - base
	m := make(map[string]any, n)
	keys := p.keyStack[len(p.keyStack)-n:]
	for j, v := range p.stack[base:] {
		m[keys[j]] = v
	}
	clear(p.stack[base:])
	p.stack = p.stack[:base]
	p.keyStack = p.keyStack[:len(p.keyStack)-n]
	p.depth--
	return m, nil
}

// maxChunk bounds the string storage chunks reserved as an object grows,
// and minChunk is the least reserved.
const (
	maxChunk = 16384
	minChunk = 64
)

// itemChunk is the string storage reserved for a list's first item.
const itemChunk = 512

// items parses the value of a top-level "items" field: each element of an
// array there is a list item, whose strings get storage of their own.
func (p *parser) items() (any, error) {
	p.skipSpace()
	if p.i >= len(p.data) || p.data[p.i] != '[' {
		return p.value()
	}
	p.perItem = true
	defer func() { p.perItem = false }()
	return p.array()
}

func (p *parser) array() (any, error) {
	p.depth++
	if p.depth > maxDepth {
		return nil, errDepth
	}
	p.i++ // '['
	base := len(p.stack)
	p.skipSpace()
	if p.i < len(p.data) && p.data[p.i] == ']' {
		p.i++
		p.depth--
		return []any{}, nil
	}
	perItem := p.perItem
	p.perItem = false
	first := true
	for {
		if perItem {
			// A list's items are alike: each reserves what the one before
			// it took, and a little more.
			hint := itemChunk
			if !first {
				hint = p.used + p.used/8 + 32
			}
			p.arena, p.arenaHint, p.used, first = nil, hint, 0, false
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		p.stack = append(p.stack, v)
		p.skipSpace()
		if p.i >= len(p.data) {
			return nil, p.syntaxError("unexpected end of JSON input")
		}
		c := p.data[p.i]
		p.i++
		if c == ']' {
			break
		}
		if c != ',' {
			p.i--
			return nil, p.syntaxError("invalid character after array element")
		}
	}
	out := make([]any, len(p.stack)-base)
	copy(out, p.stack[base:])
	clear(p.stack[base:])
	p.stack = p.stack[:base]
	p.depth--
	return out, nil
}

// str parses the string at p.i (its opening quote). Keys are shared through
// the key cache; values are cut from the object's storage.
func (p *parser) str(key bool) (string, error) {
	p.i++ // '"'
	start := p.i
	plain := true // no escapes, valid UTF-8
	ascii := true
	for {
		if p.i >= len(p.data) {
			return "", p.syntaxError("unexpected end of JSON input")
		}
		c := p.data[p.i]
		if c == '"' {
			break
		}
		if c == '\\' {
			plain = false
			p.i++
			if p.i >= len(p.data) {
				return "", p.syntaxError("unexpected end of JSON input")
			}
			switch p.data[p.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.i++
			case 'u':
				p.i++
				for range 4 {
					if p.i >= len(p.data) {
						return "", p.syntaxError("unexpected end of JSON input")
					}
					if !isHex(p.data[p.i]) {
						return "", p.syntaxError("invalid character in \\u hexadecimal character escape")
					}
					p.i++
				}
			default:
				return "", p.syntaxError("invalid character in string escape code")
			}
			continue
		}
		if c < 0x20 {
			return "", p.syntaxError("invalid character in string literal")
		}
		if c >= utf8.RuneSelf {
			ascii = false
		}
		p.i++
	}
	raw := p.data[start:p.i]
	p.i++ // closing quote
	if plain && !ascii && !utf8.Valid(raw) {
		plain = false
	}
	if !plain {
		raw = unquote(raw)
	}
	if key {
		return p.keys.intern(raw, p), nil
	}
	return p.take(raw), nil
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// unquote decodes the escapes of a valid JSON string's contents s and
// replaces each byte of invalid UTF-8 with U+FFFD, as encoding/json does:
// a \u escape of a lone surrogate, or of a high surrogate not followed by a
// \u escape of a low one, is U+FFFD too.
func unquote(s []byte) []byte {
	b := make([]byte, 0, len(s)+2*utf8.UTFMax)
	for r := 0; r < len(s); {
		c := s[r]
		switch {
		case c == '\\':
			r++
			switch s[r] {
			case '"', '\\', '/':
				b = append(b, s[r])
				r++
			case 'b':
				b = append(b, '\b')
				r++
			case 'f':
				b = append(b, '\f')
				r++
			case 'n':
				b = append(b, '\n')
				r++
			case 'r':
				b = append(b, '\r')
				r++
			case 't':
				b = append(b, '\t')
				r++
			case 'u':
				rr := hex4(s[r+1 : r+5])
				r += 5
				if utf16.IsSurrogate(rr) {
					if r+6 <= len(s) && s[r] == '\\' && s[r+1] == 'u' {
						if dec := utf16.DecodeRune(rr, hex4(s[r+2:r+6])); dec != utf8.RuneError {
							r += 6
							b = utf8.AppendRune(b, dec)
							break
						}
					}
					rr = utf8.RuneError
				}
				b = utf8.AppendRune(b, rr)
			}
		case c < utf8.RuneSelf:
			b = append(b, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			r += size
			b = utf8.AppendRune(b, rr)
		}
	}
	return b
}

// hex4 is the value of four hexadecimal digits (already checked).
func hex4(s []byte) rune {
	var r rune
	for _, c := range s {
		switch {
		case c <= '9':
			c -= '0'
		case c <= 'F':
			c = c - 'A' + 10
		default:
			c = c - 'a' + 10
		}
		r = r*16 + rune(c)
	}
	return r
}

// number parses the number at p.i: an int64 when its literal has no '.'
// and strconv.ParseInt accepts it (so "1e3" is a float64), else a float64;
// a literal out of float64's range is an error, as in encoding/json.
func (p *parser) number() (any, error) {
	start := p.i
	d := p.data
	i := p.i
	if d[i] == '-' {
		i++
	}
	if i >= len(d) {
		p.i = i
		return nil, p.syntaxError("unexpected end of JSON input")
	}
	switch {
	case d[i] == '0':
		i++
	case d[i] >= '1' && d[i] <= '9':
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	default:
		p.i = i
		return nil, p.syntaxError("invalid character in numeric literal")
	}
	integer := true
	hasDot := false
	if i < len(d) && d[i] == '.' {
		integer, hasDot = false, true
		i++
		if i >= len(d) {
			p.i = i
			return nil, p.syntaxError("unexpected end of JSON input")
		}
		if d[i] < '0' || d[i] > '9' {
			p.i = i
			return nil, p.syntaxError("invalid character after decimal point in numeric literal")
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		integer = false
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) {
			p.i = i
			return nil, p.syntaxError("unexpected end of JSON input")
		}
		if d[i] < '0' || d[i] > '9' {
			p.i = i
			return nil, p.syntaxError("invalid character in exponent of numeric literal")
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	p.i = i
	lit := d[start:i]
	if integer && len(lit) <= 18 {
		// Fits an int64 for sure: at most 18 digits.
		var v int64
		neg := lit[0] == '-'
		digits := lit
		if neg {
			digits = lit[1:]
		}
		for _, c := range digits {
			v = v*10 + int64(c-'0')
		}
		if neg {
			v = -v
		}
		return v, nil
	}
	s := unsafe.String(&lit[0], len(lit))
	if !hasDot {
		if v, err := strconv.ParseInt(s, 10, 64); err == nil {
			return v, nil
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, fmt.Errorf("unstructuredjson: cannot decode number %s into a float64", strconv.Quote(string(lit)))
	}
	return f, nil
}
