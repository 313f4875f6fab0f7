package backend

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"gopkg.in/natefinch/lumberjack.v2"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/capstan-io/capstan/audit"
)

// The formats of --audit-log-format.
const (
	FormatJSON   = "json"
	FormatLegacy = "legacy"
)

// Formats are the valid formats.
var Formats = []string{FormatLegacy, FormatJSON}

// LogFile is where --audit-log-* write.
type LogFile struct {
	Path       string // "-" is standard output
	MaxAgeDays int
	MaxBackups int
	MaxSizeMB  int // 0: never rotated
	Compress   bool
}

// Open returns a writer of the log: stdout, an appending file, or a file
// rotated by size. The file is created (0600, with its directory) now, so
// that a wrong path fails at start.
func (f LogFile) Open() (io.WriteCloser, error) {
	if f.Path == "-" {
		return nopCloser{os.Stdout}, nil
	}
	if err := os.MkdirAll(filepath.Dir(f.Path), 0o700); err != nil {
		return nil, err
	}
	file, err := os.OpenFile(f.Path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	if f.MaxSizeMB == 0 {
		return file, nil
	}
	_ = file.Close()
	return &lumberjack.Logger{Filename: f.Path, MaxAge: f.MaxAgeDays, MaxBackups: f.MaxBackups,
		MaxSize: f.MaxSizeMB, Compress: f.Compress}, nil
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// Log writes one line per event.
type Log struct {
	nothingToRun
	format string
	logger *slog.Logger

	mu  sync.Mutex // guards out: one line at a time
	out io.WriteCloser
}

// NewLog returns a log backend writing to out in format.
func NewLog(out io.WriteCloser, format string, logger *slog.Logger) (*Log, error) {
	if format != FormatJSON && format != FormatLegacy {
		return nil, fmt.Errorf("invalid audit log format %s, allowed formats are %q", format, strings.Join(Formats, ","))
	}
	return &Log{out: out, format: format, logger: logger}, nil
}

// ProcessEvents writes the events; false if one was not written.
func (l *Log) ProcessEvents(events ...*auditv1.Event) bool {
	ok := true
	for _, ev := range events {
		if err := l.write(ev); err != nil {
			pluginError(l.logger, "log", err, ev)
			ok = false
		}
	}
	return ok
}

func (l *Log) write(ev *auditv1.Event) error {
	var line []byte
	if l.format == FormatLegacy {
		line = []byte(audit.EventString(ev) + "\n")
	} else {
		b, err := json.Marshal(typed(ev))
		if err != nil {
			return err
		}
		line = append(b, '\n')
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err := l.out.Write(line)
	return err
}

// Shutdown closes the file.
func (l *Log) Shutdown() {
	l.mu.Lock()
	defer l.mu.Unlock()
	_ = l.out.Close()
}

func (l *Log) String() string { return "log" }
