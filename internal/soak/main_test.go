package soak

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/kinformer/kinformer/internal/pbdecode"
	"github.com/kinformer/kinformer/internal/testenv"
)

// TestMain fails the package's test binary when any test leaves a goroutine running after
// it returns (idle HTTP/2 connections of the clientsets close on their own schedule; what
// must not survive is kinformer's own goroutines), and when an object the tests read from
// the server in protobuf decodes differently with kinformer's generated decoders than with
// apimachinery's (pbdecode.RunVerifying).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(verifyingDecoding{m}, testenv.LeakOptions()...)
}

// verifyingDecoding runs the tests with pbdecode's verification on.
type verifyingDecoding struct{ m *testing.M }

func (v verifyingDecoding) Run() int { return pbdecode.RunVerifying(v.m, os.Stderr) }
