package cache

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// stDone is a DoneChecker over a channel.
type stDone struct{ ch chan struct{} }

func (d stDone) Name() string          { return "st-done" }
func (d stDone) Done() <-chan struct{} { return d.ch }

func TestIsDone(t *testing.T) {
	open := stDone{ch: make(chan struct{})}
	closed := stDone{ch: make(chan struct{})}
	close(closed.ch)
	cases := []struct {
		name    string
		checker DoneChecker
		want    bool
	}{
		{"open", open, false},
		{"closed", closed, true},
		{"nil channel", stDone{}, false},
		{"nil checker", nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, IsDone(tc.checker))
		})
	}
}
