package cache

import (
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/clock"
)

// expirationFakeStorage wraps a ThreadSafeStore and reports, on a channel,
// every key the ExpirationCache removes because it expired.
type expirationFakeStorage struct {
	ThreadSafeStore
	deletedKeys chan<- string
}

// Delete removes key and then sends it on deletedKeys (when not nil). The
// ExpirationCache uses Delete only for expired entries.
func (s *expirationFakeStorage) Delete(key string) {
	s.ThreadSafeStore.Delete(key)
	if s.deletedKeys != nil {
		s.deletedKeys <- key
	}
}

// FakeExpirationPolicy is an ExpirationPolicy for tests: every entry is
// expired except those whose key, computed by RetrieveKeyFunc from the
// *TimestampedEntry, is in NeverExpire.
type FakeExpirationPolicy struct {
	NeverExpire     sets.Set[string]
	RetrieveKeyFunc KeyFunc
}

// IsExpired reports whether obj's key is outside NeverExpire. A nil
// RetrieveKeyFunc uses the key the entry was stored under; an entry whose
// key cannot be computed is expired. Differs from client-go v0.37.2; see
// COMPATIBILITY.md.
func (p *FakeExpirationPolicy) IsExpired(obj *TimestampedEntry) bool {
	if obj == nil {
		return true
	}
	key := obj.key
	if p.RetrieveKeyFunc != nil {
		k, err := p.RetrieveKeyFunc(obj)
		if err != nil {
			return true
		}
		key = k
	}
	return !p.NeverExpire.Has(key)
}

// NewFakeExpirationStore returns an ExpirationCache for tests: it stamps
// entries with cacheClock, expires them by expirationPolicy, and sends the
// key of every expired entry it removes on deletedKeys (unless nil; the send
// blocks until received, so use a buffered channel or a reader). With a nil
// deletedKeys, expired entries are removed all the same. Differs from
// client-go v0.37.2; see COMPATIBILITY.md.
func NewFakeExpirationStore(keyFunc KeyFunc, deletedKeys chan<- string, expirationPolicy ExpirationPolicy, cacheClock clock.Clock) Store {
	if cacheClock == nil {
		cacheClock = clock.RealClock{}
	}
	return &ExpirationCache{
		cacheStorage:     &expirationFakeStorage{ThreadSafeStore: NewThreadSafeStore(Indexers{}, Indices{}), deletedKeys: deletedKeys},
		keyFunc:          keyFunc,
		clock:            cacheClock,
		expirationPolicy: expirationPolicy,
	}
}
