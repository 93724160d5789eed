package cache

import (
	"errors"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// ExpirationCache is a Store whose entries expire. Every write stamps the
// object with the cache's clock; reads (Get, GetByKey, List, ListKeys)
// consult the ExpirationPolicy and drop expired entries as they meet them,
// so expiry is lazy and needs no goroutine. Objects are returned without
// their timestamps. It is safe for concurrent use.
//
// Reads that may expire entries take a write lock, so an ExpirationCache is
// slower than a plain Store under concurrent reads.
type ExpirationCache struct {
	cacheStorage     ThreadSafeStore
	keyFunc          KeyFunc
	clock            clock.Clock
	expirationPolicy ExpirationPolicy
	// expirationLock makes "found expired" and "deleted" one step, so that
	// an object written in between is never removed by a stale decision.
	expirationLock sync.Mutex
}

var _ Store = &ExpirationCache{}

// ExpirationPolicy decides whether a stored entry has expired. It is called
// with the cache's lock held and must not call back into the cache.
type ExpirationPolicy interface {
	IsExpired(obj *TimestampedEntry) bool
}

// TTLPolicy expires entries older than TTL, as measured by Clock. A TTL of
// zero or less never expires anything.
type TTLPolicy struct {
	// TTL is the age beyond which an entry is expired; zero or negative
	// disables expiry.
	TTL time.Duration

	// Clock measures the age of entries; nil means the real clock.
	Clock clock.Clock
}

// IsExpired reports whether obj is older than the TTL. A nil Clock uses the
// real clock.
func (p *TTLPolicy) IsExpired(obj *TimestampedEntry) bool {
	if p.TTL <= 0 {
		return false
	}
	c := p.Clock
	if c == nil {
		c = clock.RealClock{}
	}
	return c.Since(obj.Timestamp) > p.TTL
}

// TimestampedEntry is what an ExpirationCache stores: the object and the
// time it was written, according to the cache's clock. Timestamps are only
// meaningful against that clock; do not mix in times from other machines
// (such as the API server).
type TimestampedEntry struct {
	Obj       interface{}
	Timestamp time.Time
	key       string
}

// NewTTLStore returns an ExpirationCache whose entries expire ttl after
// being written, on the real clock.
func NewTTLStore(keyFunc KeyFunc, ttl time.Duration) Store {
	return NewExpirationStore(keyFunc, &TTLPolicy{TTL: ttl, Clock: clock.RealClock{}})
}

// NewExpirationStore returns an ExpirationCache that stamps entries with the
// real clock and expires them by expirationPolicy.
func NewExpirationStore(keyFunc KeyFunc, expirationPolicy ExpirationPolicy) Store {
	return &ExpirationCache{
		cacheStorage:     NewThreadSafeStore(Indexers{}, Indices{}),
		keyFunc:          keyFunc,
		clock:            clock.RealClock{},
		expirationPolicy: expirationPolicy,
	}
}

// key computes obj's key, wrapping failures in a KeyError.
func (c *ExpirationCache) key(obj interface{}) (string, error) {
	if c.keyFunc == nil {
		return "", KeyError{Obj: obj, Err: errors.New("expiration cache has no key function")}
	}
	key, err := c.keyFunc(obj)
	if err != nil {
		return "", KeyError{Obj: obj, Err: err}
	}
	return key, nil
}

// expiredLocked reports whether e has expired. A nil policy never expires.
func (c *ExpirationCache) expiredLocked(e *TimestampedEntry) bool {
	return c.expirationPolicy != nil && c.expirationPolicy.IsExpired(e)
}

// getOrExpire returns the live object under key, deleting it if it expired.
func (c *ExpirationCache) getOrExpire(key string) (interface{}, bool) {
	c.expirationLock.Lock()
	defer c.expirationLock.Unlock()
	return c.getOrExpireLocked(key)
}

func (c *ExpirationCache) getOrExpireLocked(key string) (interface{}, bool) {
	item, ok := c.cacheStorage.Get(key)
	if !ok {
		return nil, false
	}
	e, ok := item.(*TimestampedEntry)
	if !ok {
		return nil, false
	}
	if c.expiredLocked(e) {
		c.cacheStorage.Delete(key)
		return nil, false
	}
	return e.Obj, true
}

// GetByKey returns the unexpired object under key, removing it if it has
// expired. It never fails.
func (c *ExpirationCache) GetByKey(key string) (interface{}, bool, error) {
	obj, ok := c.getOrExpire(key)
	return obj, ok, nil
}

// Get returns the unexpired object with obj's key, removing it if it has
// expired. It returns a KeyError when the key cannot be computed.
func (c *ExpirationCache) Get(obj interface{}) (interface{}, bool, error) {
	key, err := c.key(obj)
	if err != nil {
		return nil, false, err
	}
	item, ok := c.getOrExpire(key)
	return item, ok, nil
}

// liveLocked returns the keys of the unexpired entries and their objects,
// removing the expired entries.
func (c *ExpirationCache) liveLocked() ([]string, []interface{}) {
	keys := c.cacheStorage.ListKeys()
	live := keys[:0]
	objs := make([]interface{}, 0, len(keys))
	for _, key := range keys {
		if obj, ok := c.getOrExpireLocked(key); ok {
			live = append(live, key)
			objs = append(objs, obj)
		}
	}
	return live, objs
}

// List returns the unexpired objects, removing expired entries.
func (c *ExpirationCache) List() []interface{} {
	c.expirationLock.Lock()
	defer c.expirationLock.Unlock()
	_, objs := c.liveLocked()
	return objs
}

// ListKeys returns the keys of the unexpired objects, removing expired
// entries; it agrees with Get and List. Differs from client-go v0.37.2; see
// COMPATIBILITY.md.
func (c *ExpirationCache) ListKeys() []string {
	c.expirationLock.Lock()
	defer c.expirationLock.Unlock()
	keys, _ := c.liveLocked()
	return keys
}

// LastStoreSyncResourceVersion returns the newest resource version seen;
// see Store.
func (c *ExpirationCache) LastStoreSyncResourceVersion() string {
	return c.cacheStorage.LastStoreSyncResourceVersion()
}

// Bookmark records rv as the newest resource version seen.
func (c *ExpirationCache) Bookmark(rv string) {
	c.cacheStorage.Bookmark(rv)
}

// Add stores obj stamped with the current time, replacing (and so
// refreshing) any entry with the same key. It returns a KeyError when the
// key cannot be computed. obj's resource version is recorded as the newest
// seen, as other stores do. Differs from client-go v0.37.2; see
// COMPATIBILITY.md.
func (c *ExpirationCache) Add(obj interface{}) error {
	key, err := c.key(obj)
	if err != nil {
		return err
	}
	rv, hasRV := storeResourceVersionOf(obj)
	c.expirationLock.Lock()
	defer c.expirationLock.Unlock()
	c.cacheStorage.Add(key, &TimestampedEntry{Obj: obj, Timestamp: c.clock.Now(), key: key})
	if hasRV {
		c.cacheStorage.Bookmark(rv)
	}
	return nil
}

// Update is Add: it replaces the entry and refreshes its timestamp.
func (c *ExpirationCache) Update(obj interface{}) error {
	return c.Add(obj)
}

// Delete removes the entry with obj's key. It returns a KeyError when the
// key cannot be computed.
func (c *ExpirationCache) Delete(obj interface{}) error {
	key, err := c.key(obj)
	if err != nil {
		return err
	}
	c.expirationLock.Lock()
	defer c.expirationLock.Unlock()
	c.cacheStorage.DeleteWithObject(key, obj)
	return nil
}

// Replace makes list, all stamped with the current time, the whole content
// of the cache. If an object cannot be keyed, Replace returns its KeyError
// and changes nothing.
func (c *ExpirationCache) Replace(list []interface{}, resourceVersion string) error {
	now := c.clock.Now()
	items := make(map[string]interface{}, len(list))
	for _, obj := range list {
		key, err := c.key(obj)
		if err != nil {
			return err
		}
		items[key] = &TimestampedEntry{Obj: obj, Timestamp: now, key: key}
	}
	c.expirationLock.Lock()
	defer c.expirationLock.Unlock()
	c.cacheStorage.Replace(items, resourceVersion)
	return nil
}

// Resync does nothing and returns nil.
func (c *ExpirationCache) Resync() error {
	return nil
}
