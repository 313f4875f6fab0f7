package app

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// vmodule is --vmodule as klog reads it: pattern=N items, the first
// whose pattern matches a file setting the verbosity of its logs. A
// pattern without a slash matches the file's base name, with one the
// full path, both without ".go"; * and ? are globs.
type vmodule []vmoduleItem

type vmoduleItem struct {
	pattern string
	v       int
}

// parseVModule parses the flag with kube's messages.
func parseVModule(value string) (vmodule, error) {
	var out vmodule
	for _, pat := range strings.Split(value, ",") {
		if pat == "" {
			continue
		}
		parts := strings.Split(pat, "=")
		if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
			return nil, fmt.Errorf("%q does not have the pattern=N format", pat)
		}
		v, err := strconv.ParseUint(parts[1], 10, 31)
		if err != nil {
			return nil, fmt.Errorf("parsing verbosity in %q: %w", pat, err)
		}
		out = append(out, vmoduleItem{pattern: parts[0], v: int(v)})
	}
	return out, nil
}

// level is the verbosity the first matching item gives file.
func (m vmodule) level(file string) (int, bool) {
	file = strings.TrimSuffix(file, ".go")
	base := filepath.Base(file)
	for _, it := range m {
		name := base
		if strings.Contains(it.pattern, "/") {
			name = file
		}
		if ok, _ := filepath.Match(it.pattern, name); ok {
			return it.v, true
		}
	}
	return 0, false
}

// max is the highest verbosity any item gives.
func (m vmodule) max() int {
	n := 0
	for _, it := range m {
		n = max(n, it.v)
	}
	return n
}

// verbosityOf is the -v level a record's slog level stands for: Info and
// above always show (0), Debug is 1, and each 4 levels below is one more.
func verbosityOf(l slog.Level) int {
	if l >= slog.LevelInfo {
		return 0
	}
	return (int(slog.LevelInfo-l) + 3) / 4
}

// levelOf is the lowest slog level shown at verbosity v.
func levelOf(v int) slog.Level { return slog.LevelInfo - slog.Level(4*v) }

// vmoduleHandler shows a record below Info only if the verbosity of the
// file that logged it (--vmodule, else -v) reaches the record's.
type vmoduleHandler struct {
	slog.Handler // set to the lowest level any file shows
	v            int
	module       vmodule
}

func (h *vmoduleHandler) Handle(ctx context.Context, r slog.Record) error {
	if rv := verbosityOf(r.Level); rv > 0 {
		v := h.v
		if r.PC != 0 {
			frame, _ := runtime.CallersFrames([]uintptr{r.PC}).Next()
			if mv, ok := h.module.level(frame.File); ok {
				v = mv
			}
		}
		if rv > v {
			return nil
		}
	}
	return h.Handler.Handle(ctx, r)
}

func (h *vmoduleHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &vmoduleHandler{Handler: h.Handler.WithAttrs(attrs), v: h.v, module: h.module}
}

func (h *vmoduleHandler) WithGroup(name string) slog.Handler {
	return &vmoduleHandler{Handler: h.Handler.WithGroup(name), v: h.v, module: h.module}
}
