package snapshot

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

// An encrypted snapshot file wraps the plain format (format.go) whole:
//
//	magic    8 bytes  "KINFSNAE"
//	version  uint16   1
//	salt     32 bytes, random per file
//	chunks   the plain file cut into chunks of chunkSize bytes, each
//	         sealed with AES-256-GCM (16 bytes of tag added)
//
// The file's key is HKDF-SHA256 of the user's key with the salt, so no two
// files share a key and the nonce can be a counter: 11 bytes of chunk
// number, then one byte that is 1 for the last chunk and 0 otherwise. The
// last chunk holds 0 to chunkSize bytes, every other exactly
// chunkSize, so a file cut at a chunk boundary, chunks swapped or
// replayed from another file, or a single changed bit fail authentication.
const (
	cryptMagic   = "KINFSNAE"
	cryptVersion = 1
	saltSize     = 32
	chunkSize    = 64 << 10
	// KeySize is the size in bytes of a snapshot encryption key: an
	// AES-256 key.
	KeySize = 32
)

// EncryptedHeaderSize is the size of what starts an encrypted file before
// its first chunk: the magic, the version and the salt.
const EncryptedHeaderSize = len(cryptMagic) + 2 + saltSize

// errAuthentication is File.Read's error for an
// encrypted file that does not decrypt with the key: another key, or a file
// changed, cut or assembled from others.
var errAuthentication = errors.New("the encrypted snapshot fails authentication: another key, or a corrupt, truncated or altered file")

// CheckKey returns an error, saying what is wrong, unless key is a usable
// snapshot encryption key: KeySize bytes long.
func CheckKey(key []byte) error {
	if len(key) != KeySize {
		return fmt.Errorf("the snapshot encryption key has %d bytes; it must have %d (AES-256)", len(key), KeySize)
	}
	return nil
}

// fileAEAD derives the file key of salt from key and returns its cipher.
func fileAEAD(key, salt []byte) (cipher.AEAD, error) {
	if err := CheckKey(key); err != nil {
		return nil, err
	}
	fileKey, err := hkdf.Key(sha256.New, key, salt, "kinformer informer snapshot v1", KeySize)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(fileKey)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// nonceOf is the nonce of chunk n.
func nonceOf(buf []byte, n uint64, last bool) []byte {
	clear(buf)
	binary.BigEndian.PutUint64(buf[3:11], n)
	if last {
		buf[11] = 1
	}
	return buf
}

// IsEncrypted tells whether data starts as an encrypted snapshot file does.
func IsEncrypted(data []byte) bool {
	return len(data) >= len(cryptMagic) && string(data[:len(cryptMagic)]) == cryptMagic
}

// encrypter is an io.WriteCloser that encrypts what is written to it
// into w, chunk by chunk; Close writes the last chunk (it does not close w).
type encrypter struct {
	w      io.Writer
	aead   cipher.AEAD
	nonce  []byte
	n      uint64
	plain  []byte
	sealed []byte
}

// newEncrypter writes the header of an encrypted file to w and
// returns the writer of its content.
func newEncrypter(w io.Writer, key []byte) (*encrypter, error) {
	header := make([]byte, 0, EncryptedHeaderSize)
	header = append(header, cryptMagic...)
	header = binary.LittleEndian.AppendUint16(header, cryptVersion)
	salt := make([]byte, saltSize)
	if _, err := rand.Read(salt); err != nil {
		return nil, err
	}
	aead, err := fileAEAD(key, salt)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(append(header, salt...)); err != nil {
		return nil, err
	}
	return &encrypter{
		w:      w,
		aead:   aead,
		nonce:  make([]byte, aead.NonceSize()),
		plain:  make([]byte, 0, chunkSize),
		sealed: make([]byte, 0, chunkSize+aead.Overhead()),
	}, nil
}

// Write buffers p, sealing and writing every chunk that is full and
// followed by more data (the last chunk is only known at Close).
func (e *encrypter) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		if len(e.plain) == chunkSize {
			if err := e.seal(false); err != nil {
				return written, err
			}
		}
		n := copy(e.plain[len(e.plain):chunkSize], p)
		e.plain = e.plain[:len(e.plain)+n]
		p = p[n:]
		written += n
	}
	return written, nil
}

// Close seals and writes the last chunk.
func (e *encrypter) Close() error {
	return e.seal(true)
}

func (e *encrypter) seal(last bool) error {
	e.sealed = e.aead.Seal(e.sealed[:0], nonceOf(e.nonce, e.n, last), e.plain, nil)
	e.n++
	e.plain = e.plain[:0]
	_, err := e.w.Write(e.sealed)
	return err
}

// decrypt returns the plain content of the encrypted file data.
func decrypt(data, key []byte) ([]byte, error) {
	if len(data) < EncryptedHeaderSize {
		return nil, errors.New("truncated: the encrypted snapshot's header is incomplete")
	}
	if v := binary.LittleEndian.Uint16(data[len(cryptMagic):]); v != cryptVersion {
		return nil, fmt.Errorf("encrypted snapshot format version %d; this build reads version %d", v, cryptVersion)
	}
	aead, err := fileAEAD(key, data[len(cryptMagic)+2:EncryptedHeaderSize])
	if err != nil {
		return nil, err
	}
	rest := data[EncryptedHeaderSize:]
	full := chunkSize + aead.Overhead()
	plain := make([]byte, 0, len(rest))
	nonce := make([]byte, aead.NonceSize())
	for n := uint64(0); ; n++ {
		last := len(rest) <= full
		chunk := rest
		if !last {
			chunk = rest[:full]
		}
		if len(chunk) < aead.Overhead() {
			return nil, errAuthentication
		}
		plain, err = aead.Open(plain, nonceOf(nonce, n, last), chunk, nil)
		if err != nil {
			return nil, errAuthentication
		}
		if last {
			return plain, nil
		}
		rest = rest[full:]
	}
}
