package snapshot

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEncryptionChunkBoundaries(t *testing.T) {
	key := testKey(3)
	// Sizes around the chunk size, so that the last chunk is empty, short
	// or full, and a file cut after a full chunk is caught.
	for _, size := range []int{0, 1, chunkSize - 1, chunkSize, chunkSize + 1, 2 * chunkSize, 2*chunkSize + 7} {
		plain := make([]byte, size)
		for i := range plain {
			plain[i] = byte(i * 7)
		}
		var file bytes.Buffer
		enc, err := newEncrypter(&file, key)
		require.NoError(t, err)
		// Written in uneven pieces, as bufio hands them over.
		for rest := plain; len(rest) > 0; {
			n := min(len(rest), 5000)
			_, err := enc.Write(rest[:n])
			require.NoError(t, err)
			rest = rest[n:]
		}
		require.NoError(t, enc.Close())
		got, err := decrypt(file.Bytes(), key)
		require.NoError(t, err, "size %d", size)
		assert.True(t, bytes.Equal(plain, got), "size %d round trip", size)
		chunks := (file.Len() - EncryptedHeaderSize) / (chunkSize + 16)
		if size > chunkSize {
			cut := file.Bytes()[:EncryptedHeaderSize+chunks*(chunkSize+16)]
			if len(cut) == file.Len() {
				cut = cut[:len(cut)-(chunkSize+16)]
			}
			_, err = decrypt(cut, key)
			assert.ErrorIs(t, err, errAuthentication, "size %d cut after a full chunk", size)
		}
	}
}
