package queue

// Ring is a growable ring buffer used as a queue: Push and PopFront are O(1)
// amortized and reuse the same storage between pops, and the storage shrinks
// again once a burst has drained. The zero value is an empty ring.
type Ring[T any] struct {
	buf  []T // len(buf) is zero or a power of two
	head int
	n    int
}

const (
	ringMinSize = 16
	// ringShrinkAbove is the capacity above which a mostly empty ring gives
	// memory back; below it, repeated bursts reuse the same storage.
	ringShrinkAbove = 1024
)

// Len returns the number of elements.
func (r *Ring[T]) Len() int { return r.n }

// Push appends v at the back.
func (r *Ring[T]) Push(v T) {
	if r.n == len(r.buf) {
		r.resize(max(ringMinSize, 2*len(r.buf)))
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = v
	r.n++
}

// At returns a pointer to the i-th element from the front; 0 <= i < Len().
func (r *Ring[T]) At(i int) *T {
	return &r.buf[(r.head+i)&(len(r.buf)-1)]
}

// PopFront removes and returns the front element; the ring must not be
// empty.
func (r *Ring[T]) PopFront() T {
	var zero T
	v := r.buf[r.head]
	r.buf[r.head] = zero
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
	if len(r.buf) > ringShrinkAbove && r.n <= len(r.buf)/4 {
		r.resize(len(r.buf) / 2)
	}
	return v
}

// Reset empties the ring, dropping references to its elements.
func (r *Ring[T]) Reset() {
	clear(r.buf)
	r.head, r.n = 0, 0
	if len(r.buf) > ringShrinkAbove {
		r.buf = nil
	}
}

func (r *Ring[T]) resize(size int) {
	nb := make([]T, size)
	if r.n > 0 {
		if end := r.head + r.n; end <= len(r.buf) {
			copy(nb, r.buf[r.head:end])
		} else {
			k := copy(nb, r.buf[r.head:])
			copy(nb[k:], r.buf[:r.n-k])
		}
	}
	r.buf, r.head = nb, 0
}
