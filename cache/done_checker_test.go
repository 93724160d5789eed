package cache

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// doneChannel is a DoneChecker over a channel.
type doneChannel struct{ ch chan struct{} }

func (d doneChannel) Name() string          { return "st-done" }
func (d doneChannel) Done() <-chan struct{} { return d.ch }

func TestIsDone(t *testing.T) {
	open := doneChannel{ch: make(chan struct{})}
	closed := doneChannel{ch: make(chan struct{})}
	close(closed.ch)
	cases := []struct {
		name    string
		checker DoneChecker
		want    bool
	}{
		{"open", open, false},
		{"closed", closed, true},
		{"nil channel", doneChannel{}, false},
		{"nil checker", nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, IsDone(tc.checker))
		})
	}
}
