// Package backend delivers audit events: to a log file (one JSON event or
// one legacy line per event, rotated by size), to a webhook (EventLists
// POSTed with retries), and through the delivery modes of kube's
// --audit-*-mode flags (blocking, blocking-strict, batch).
package backend

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/capstan-io/capstan/audit"
)

// The delivery modes of --audit-log-mode and --audit-webhook-mode.
const (
	// ModeBlocking delivers each event before the request goes on, and
	// ignores delivery errors.
	ModeBlocking = "blocking"
	// ModeBlockingStrict is blocking, and a request whose first event
	// cannot be delivered fails.
	ModeBlockingStrict = "blocking-strict"
	// ModeBatch buffers events and delivers them in batches, in the
	// background.
	ModeBatch = "batch"
)

// Modes are the valid modes.
var Modes = []string{ModeBatch, ModeBlocking, ModeBlockingStrict}

// WithMode wraps b for a delivery mode.
func WithMode(b audit.Backend, mode string, batch BatchConfig, logger *slog.Logger) (audit.Backend, error) {
	switch mode {
	case ModeBlockingStrict:
		return b, nil
	case ModeBlocking:
		return ignoreErrors{b}, nil
	case ModeBatch:
		return NewBuffered(b, batch, logger), nil
	}
	return nil, fmt.Errorf("invalid audit mode %s, allowed modes are %q", mode, strings.Join(Modes, ","))
}

// ignoreErrors is a backend whose failures do not fail requests.
type ignoreErrors struct{ audit.Backend }

func (i ignoreErrors) ProcessEvents(events ...*auditv1.Event) bool {
	i.Backend.ProcessEvents(events...)
	return true
}

func (i ignoreErrors) String() string { return "ignoreErrors<" + i.Backend.String() + ">" }

// nothingToRun is the Run and Shutdown of backends without a life.
type nothingToRun struct{}

func (nothingToRun) Run(context.Context) {}
func (nothingToRun) Shutdown()           {}

// pluginError logs events a backend failed to deliver, as kube does.
func pluginError(logger *slog.Logger, plugin string, err error, events ...*auditv1.Event) {
	lines := make([]string, len(events))
	for i, ev := range events {
		lines[i] = audit.EventString(ev)
	}
	logger.Error("Error in audit plugin", "plugin", plugin, "events", len(events), "err", err, "impacted", lines)
}

// typed is a copy of ev that says its kind, as kube's encoder writes it.
func typed(ev *auditv1.Event) *auditv1.Event {
	out := *ev
	out.TypeMeta.Kind = "Event"
	out.TypeMeta.APIVersion = auditv1.SchemeGroupVersion.String()
	return &out
}
