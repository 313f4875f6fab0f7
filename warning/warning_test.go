package warning

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func TestAdd(t *testing.T) {
	long := func(c string, n int) string { return strings.Repeat(c, n) }
	cases := []struct {
		name string
		msgs []string
		want []string // the messages the header ends with, unquoted
	}{
		{"each once", []string{"a", "b", "a", ""}, []string{"a", "b"}},
		{"quotes escaped", []string{`say "hi" \o/`}, []string{`say \"hi\" \\o/`}},
		{"control characters and bad UTF-8 dropped", []string{"line\nbreak", "bad \xff", "ok"}, []string{"ok"}},
		{"up to 4 KiB kept whole", []string{long("a", 4000), long("b", 96)}, []string{long("a", 4000), long("b", 96)}},
		{
			// The third goes past 4,096 runes: all are written again cut to
			// 256, and so are later ones until 4,096 runes are written.
			"past 4 KiB all cut",
			append([]string{long("a", 2000), long("b", 10), long("c", 3000)}, msgs("d", 300, 20)...),
			append([]string{long("a", 256), long("b", 10), long("c", 256)}, msgs("d", 256, 14)...),
		},
		{"runes, not bytes", []string{long("é", 4096)}, []string{long("é", 4096)}},
		{"cut on a rune", []string{long("é", 4097)}, []string{long("é", 256)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			ctx := WithHeader(context.Background(), h)
			if WithHeader(ctx, http.Header{}) != ctx {
				t.Fatal("a second recorder replaced the first")
			}
			for _, m := range tc.msgs {
				Add(ctx, m)
			}
			got := h.Values("Warning")
			if len(got) != len(tc.want) {
				t.Fatalf("got %d warnings, want %d: %.200q", len(got), len(tc.want), got)
			}
			for i, w := range tc.want {
				if got[i] != `299 - "`+w+`"` {
					t.Errorf("warning %d = %.80q (%d bytes), want %.80q (%d bytes)", i, got[i], len(got[i]), w, len(w))
				}
			}
		})
	}
}

// msgs returns n distinct messages of the given rune length, each
// starting with prefix and its number.
func msgs(prefix string, length, n int) []string {
	out := make([]string, n)
	for i := range out {
		head := fmt.Sprintf("%s%03d", prefix, i)
		out[i] = head + strings.Repeat("x", length-len(head))
	}
	return out
}
