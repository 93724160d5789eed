package cache

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// An encrypted snapshot file wraps the plain format (snapshot.go) whole:
//
//	magic    8 bytes  "KINFSNAE"
//	version  uint16   1
//	salt     32 bytes, random per file
//	chunks   the plain file cut into chunks of snapshotChunk bytes, each
//	         sealed with AES-256-GCM (16 bytes of tag added)
//
// The file's key is HKDF-SHA256 of the user's key with the salt, so no two
// files share a key and the nonce can be a counter: 11 bytes of chunk
// number, then one byte that is 1 for the last chunk and 0 otherwise. The
// last chunk holds 0 to snapshotChunk bytes, every other exactly
// snapshotChunk, so a file cut at a chunk boundary, chunks swapped or
// replayed from another file, or a single changed bit fail authentication.
const (
	snapshotCryptMagic   = "KINFSNAE"
	snapshotCryptVersion = 1
	snapshotSaltSize     = 32
	snapshotChunk        = 64 << 10
	// SnapshotKeySize is the size in bytes of a snapshot encryption key
	// (SnapshotProtection.Key): an AES-256 key. kinformer extension.
	SnapshotKeySize = 32
)

// snapshotCryptHeaderSize is the size of the magic, version and salt.
const snapshotCryptHeaderSize = len(snapshotCryptMagic) + 2 + snapshotSaltSize

// errSnapshotAuthentication is the cause of a *SnapshotError for an
// encrypted file that does not decrypt with the key: another key, or a file
// changed, cut or assembled from others.
var errSnapshotAuthentication = errors.New("the encrypted snapshot fails authentication: another key, or a corrupt, truncated or altered file")

// checkSnapshotKey returns an error unless key is a usable key.
func checkSnapshotKey(key []byte) error {
	if len(key) != SnapshotKeySize {
		return fmt.Errorf("the snapshot encryption key has %d bytes; it must have %d (AES-256)", len(key), SnapshotKeySize)
	}
	return nil
}

// snapshotAEAD derives the file key of salt from key and returns its cipher.
func snapshotAEAD(key, salt []byte) (cipher.AEAD, error) {
	if err := checkSnapshotKey(key); err != nil {
		return nil, err
	}
	fileKey, err := hkdf.Key(sha256.New, key, salt, "kinformer informer snapshot v1", SnapshotKeySize)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(fileKey)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// snapshotNonce is the nonce of chunk n.
func snapshotNonce(buf []byte, n uint64, last bool) []byte {
	clear(buf)
	binary.BigEndian.PutUint64(buf[3:11], n)
	if last {
		buf[11] = 1
	}
	return buf
}

// isEncryptedSnapshot tells whether data starts as an encrypted snapshot.
func isEncryptedSnapshot(data []byte) bool {
	return len(data) >= len(snapshotCryptMagic) && string(data[:len(snapshotCryptMagic)]) == snapshotCryptMagic
}

// snapshotEncrypter is an io.WriteCloser that encrypts what is written to it
// into w, chunk by chunk; Close writes the last chunk (it does not close w).
type snapshotEncrypter struct {
	w      io.Writer
	aead   cipher.AEAD
	nonce  []byte
	n      uint64
	plain  []byte
	sealed []byte
}

// newSnapshotEncrypter writes the header of an encrypted file to w and
// returns the writer of its content.
func newSnapshotEncrypter(w io.Writer, key []byte) (*snapshotEncrypter, error) {
	header := make([]byte, 0, snapshotCryptHeaderSize)
	header = append(header, snapshotCryptMagic...)
	header = binary.LittleEndian.AppendUint16(header, snapshotCryptVersion)
	salt := make([]byte, snapshotSaltSize)
	if _, err := rand.Read(salt); err != nil {
		return nil, err
	}
	aead, err := snapshotAEAD(key, salt)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(append(header, salt...)); err != nil {
		return nil, err
	}
	return &snapshotEncrypter{
		w:      w,
		aead:   aead,
		nonce:  make([]byte, aead.NonceSize()),
		plain:  make([]byte, 0, snapshotChunk),
		sealed: make([]byte, 0, snapshotChunk+aead.Overhead()),
	}, nil
}

// Write buffers p, sealing and writing every chunk that is full and
// followed by more data (the last chunk is only known at Close).
func (e *snapshotEncrypter) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		if len(e.plain) == snapshotChunk {
			if err := e.seal(false); err != nil {
				return written, err
			}
		}
		n := copy(e.plain[len(e.plain):snapshotChunk], p)
		e.plain = e.plain[:len(e.plain)+n]
		p = p[n:]
		written += n
	}
	return written, nil
}

// Close seals and writes the last chunk.
func (e *snapshotEncrypter) Close() error {
	return e.seal(true)
}

func (e *snapshotEncrypter) seal(last bool) error {
	e.sealed = e.aead.Seal(e.sealed[:0], snapshotNonce(e.nonce, e.n, last), e.plain, nil)
	e.n++
	e.plain = e.plain[:0]
	_, err := e.w.Write(e.sealed)
	return err
}

// decryptSnapshot returns the plain content of the encrypted file data.
func decryptSnapshot(data, key []byte) ([]byte, error) {
	if len(data) < snapshotCryptHeaderSize {
		return nil, errors.New("truncated: the encrypted snapshot's header is incomplete")
	}
	if v := binary.LittleEndian.Uint16(data[len(snapshotCryptMagic):]); v != snapshotCryptVersion {
		return nil, fmt.Errorf("encrypted snapshot format version %d; this build reads version %d", v, snapshotCryptVersion)
	}
	aead, err := snapshotAEAD(key, data[len(snapshotCryptMagic)+2:snapshotCryptHeaderSize])
	if err != nil {
		return nil, err
	}
	rest := data[snapshotCryptHeaderSize:]
	full := snapshotChunk + aead.Overhead()
	plain := make([]byte, 0, len(rest))
	nonce := make([]byte, aead.NonceSize())
	for n := uint64(0); ; n++ {
		last := len(rest) <= full
		chunk := rest
		if !last {
			chunk = rest[:full]
		}
		if len(chunk) < aead.Overhead() {
			return nil, errSnapshotAuthentication
		}
		plain, err = aead.Open(plain, snapshotNonce(nonce, n, last), chunk, nil)
		if err != nil {
			return nil, errSnapshotAuthentication
		}
		if last {
			return plain, nil
		}
		rest = rest[full:]
	}
}
