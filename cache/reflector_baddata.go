package cache

import (
	"github.com/kinformer/kinformer/cache/internal/reflector"
)

// badDataCount returns how many times the Reflector received bad data of kind k. It is
// safe for concurrent use; tests and the metrics wiring read it.
func (r *Reflector) badDataCount(k reflector.BadData) uint64 {
	return r.engine.BadDataCount(k)
}

// badDataTotal returns how many times the Reflector received bad data of any kind. It is
// safe for concurrent use.
func (r *Reflector) badDataTotal() uint64 {
	return r.engine.BadDataTotal()
}
