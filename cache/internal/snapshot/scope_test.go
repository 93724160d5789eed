package snapshot

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestScopeDescriptionLeavesOutUserinfo: a snapshot file written by an
// older version may hold a server address with credentials in its scope;
// the error that names the scope leaves them out.
func TestScopeDescriptionLeavesOutUserinfo(t *testing.T) {
	got := describeScope(`namespace="a" labelSelector="" fieldSelector="" server="https://admin:s3cret@api.example.com:6443/prefix"`)
	assert.NotContains(t, got, "s3cret")
	assert.NotContains(t, got, "admin")
	assert.Equal(t, `namespace="a" labelSelector="" fieldSelector="" server="https://api.example.com:6443/prefix"`, got)
	assert.Equal(t, `server="https://api.example.com"`, describeScope(`server="https://api.example.com"`))
	assert.Equal(t, `server="not a url %"`, describeScope(`server="not a url %"`))
}
