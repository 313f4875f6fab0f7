package embedded

import (
	"context"
	"log/slog"
	"sync/atomic"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// newZapLogger returns a zap logger for etcd that forwards errors (and
// worse) to l. etcd logs a great deal at info level on every start; none of
// it is useful to a capstan user, so only errors pass. Once closing is set
// nothing passes: etcd reports its listeners closing under it as errors.
func newZapLogger(l *slog.Logger, closing *atomic.Bool) *zap.Logger {
	if l == nil {
		return zap.NewNop()
	}
	return zap.New(&slogCore{logger: l, closing: closing})
}

// slogCore is a zapcore.Core writing to an slog.Logger.
type slogCore struct {
	logger  *slog.Logger
	closing *atomic.Bool
	attrs   []slog.Attr // fields added with With
}

var _ zapcore.Core = (*slogCore)(nil)

func (c *slogCore) Enabled(lvl zapcore.Level) bool {
	return lvl >= zapcore.ErrorLevel && !c.closing.Load()
}

func (c *slogCore) With(fields []zapcore.Field) zapcore.Core {
	attrs := append(append([]slog.Attr(nil), c.attrs...), fieldsToAttrs(fields)...)
	return &slogCore{logger: c.logger, closing: c.closing, attrs: attrs}
}

func (c *slogCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c *slogCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	level := slog.LevelError
	if benign[e.Message] {
		level = slog.LevelDebug
	}
	attrs := append(append([]slog.Attr{slog.String("component", "etcd")}, c.attrs...), fieldsToAttrs(fields)...)
	c.logger.LogAttrs(context.Background(), level, e.Message, attrs...)
	return nil
}

// benign are the errors etcd logs in normal operation of a one-member
// embedded server: right after a start the storage-version check may run
// before the first raft term is known, and etcd retries it by itself.
var benign = map[string]bool{
	"failed to update storage version": true,
}

func (c *slogCore) Sync() error { return nil }

// fieldsToAttrs renders zap fields through zap's map encoder, which knows
// every field type, and turns the result into slog attributes.
func fieldsToAttrs(fields []zapcore.Field) []slog.Attr {
	if len(fields) == 0 {
		return nil
	}
	enc := zapcore.NewMapObjectEncoder()
	for _, f := range fields {
		f.AddTo(enc)
	}
	attrs := make([]slog.Attr, 0, len(enc.Fields))
	for k, v := range enc.Fields {
		attrs = append(attrs, slog.Any(k, v))
	}
	return attrs
}
