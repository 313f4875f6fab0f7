package app

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

func TestParseVModule(t *testing.T) {
	for _, tc := range []struct {
		flag string
		file string
		v    int
		ok   bool
		err  string
	}{
		{flag: "reflector=2", file: "/src/storage/cache/reflector.go", v: 2, ok: true},
		{flag: "refl*=1,reflector=4", file: "/src/storage/cache/reflector.go", v: 1, ok: true},
		{flag: "httplog=3,", file: "/src/server/filters/httplog.go", v: 3, ok: true},
		{flag: "*/cache/reflector=5", file: "/src/storage/cache/reflector.go", ok: false},
		{flag: "/src/*/cache/reflector=5", file: "/src/storage/cache/reflector.go", v: 5, ok: true},
		{flag: "reflector=2", file: "/src/storage/cache/watch.go", ok: false},
		{flag: "", file: "/src/a.go", ok: false},
		{flag: "reflector", err: `"reflector" does not have the pattern=N format`},
		{flag: "=2", err: `"=2" does not have the pattern=N format`},
		{flag: "a=b=c", err: `"a=b=c" does not have the pattern=N format`},
		{flag: "a=-1", err: `parsing verbosity in "a=-1"`},
	} {
		m, err := parseVModule(tc.flag)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err = %v, want %q", tc.flag, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.flag, err)
			continue
		}
		if v, ok := m.level(tc.file); v != tc.v || ok != tc.ok {
			t.Errorf("%q on %s: %d %v, want %d %v", tc.flag, tc.file, v, ok, tc.v, tc.ok)
		}
	}
}

// TestVModuleHandler: the logging file's --vmodule verbosity, else -v,
// decides whether a record below Info shows.
func TestVModuleHandler(t *testing.T) {
	for _, tc := range []struct {
		v       int
		vmodule string
		want    []string
	}{
		{v: 0, want: []string{"info"}},
		{v: 1, want: []string{"info", "debug"}},
		{v: 2, want: []string{"info", "debug", "v2"}},
		{v: 0, vmodule: "vmodule_test=1", want: []string{"info", "debug"}},
		{v: 2, vmodule: "vmodule_test=0", want: []string{"info"}},
		{v: 0, vmodule: "other=5", want: []string{"info"}},
	} {
		var out bytes.Buffer
		o := LogsOptions{Format: "text", Verbosity: tc.v, VModule: tc.vmodule}
		logger := o.logger(&out).With("k", "v")
		logger.Info("info")
		logger.Debug("debug")
		logger.Log(t.Context(), slog.LevelDebug-4, "v2")
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			if _, msg, ok := strings.Cut(line, "msg="); ok {
				got = append(got, strings.Fields(msg)[0])
			}
		}
		if strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("-v=%d --vmodule=%q: logged %v, want %v", tc.v, tc.vmodule, got, tc.want)
		}
	}
}
