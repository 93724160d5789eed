package unstructuredjson

import (
	"sync"
	"sync/atomic"
)

// The key table shares object keys across decodings: the keys of API
// objects repeat ("metadata", "name", label keys), so each is allocated once
// per process instead of once per object. It is bounded in entries and in
// key length; keys beyond the bounds are stored with their object.
const (
	maxSharedKeys   = 16384
	maxSharedKeyLen = 128
)

// keyTable is the process-wide table, read without locking: a decoding reads
// the snapshot current when it starts and publishes the keys it added when
// it ends (copy on write), so the table changes rarely once the keys of the
// resources a process watches are in it.
var keyTable struct {
	mu       sync.Mutex
	snapshot atomic.Pointer[map[string]string]
}

// keyCache is one decoding's view of the key table.
type keyCache struct {
	shared map[string]string // the table's snapshot
	local  map[string]string // keys added by this decoding
}

func newKeyCache() keyCache {
	var c keyCache
	if m := keyTable.snapshot.Load(); m != nil {
		c.shared = *m
	}
	return c
}

// intern returns the shared string of key b, adding it when the bounds
// allow; otherwise a copy in the current object's storage.
func (c *keyCache) intern(b []byte, p *parser) string {
	if s, ok := c.shared[string(b)]; ok {
		return s
	}
	if s, ok := c.local[string(b)]; ok {
		return s
	}
	if len(b) > maxSharedKeyLen || len(c.shared)+len(c.local) >= maxSharedKeys {
		return p.take(b)
	}
	s := string(b)
	if c.local == nil {
		c.local = make(map[string]string)
	}
	c.local[s] = s
	return s
}

// publish adds the keys this decoding added to the table, up to its bound.
func (c *keyCache) publish() {
	if len(c.local) == 0 {
		return
	}
	keyTable.mu.Lock()
	defer keyTable.mu.Unlock()
	var cur map[string]string
	if m := keyTable.snapshot.Load(); m != nil {
		cur = *m
	}
	if len(cur) >= maxSharedKeys {
		return
	}
	next := make(map[string]string, min(len(cur)+len(c.local), maxSharedKeys))
	for k, v := range cur {
		next[k] = v
	}
	for k, v := range c.local {
		if len(next) >= maxSharedKeys {
			break
		}
		if _, ok := next[k]; !ok {
			next[k] = v
		}
	}
	keyTable.snapshot.Store(&next)
}
