package testkit

import (
	"io"
	"log"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
)

// Main runs a test binary's tests, for its TestMain, with the loggers that
// are one per process silenced: klog, which client-go's reflectors, leader
// election and warning handler write to, and the standard logger, which
// net/http's servers write their TLS handshake errors to. A test's output
// is then its failures, and a failure is what the end of a CI log shows.
// Servers log through their own loggers, never these; only TestMain may
// call Main, since the change is the whole process's.
func Main(m *testing.M) int {
	klog.SetLogger(logr.Discard())
	log.SetOutput(io.Discard)
	return m.Run()
}
