// Package warning carries the Warning headers that storage and strategies
// raise during a request back to the response, as kube's warning recorder
// does: storage sees a context, not the ResponseWriter.
package warning

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// A response's warnings are bounded as kube-apiserver bounds them, so that
// a request that raises thousands (a field validation warning per unknown
// field, say) cannot make a header no client or proxy accepts. Past
// maxRunes of text in all, every warning so far is cut to itemRunes and so
// is each new one, until the cut ones reach maxRunes too.
const (
	maxRunes  = 4 << 10
	itemRunes = 256
)

type recorderKey struct{}

// recorder adds each distinct message once to a response's header.
type recorder struct {
	mu     sync.Mutex
	header http.Header
	seen   map[string]bool
	// texts are the messages in the order they came, to write again cut
	// when the header would outgrow maxRunes.
	texts []string
	// runes is the text in the header so far, in runes.
	runes int
	// cutting is set once the messages are being cut to itemRunes.
	cutting bool
}

// WithHeader returns a copy of ctx whose warnings go to header, which must
// be the response's header map while the handler may still add to it. A
// ctx that has a recorder already is returned as it is.
func WithHeader(ctx context.Context, header http.Header) context.Context {
	if _, ok := ctx.Value(recorderKey{}).(*recorder); ok {
		return ctx
	}
	// seen is made by the first warning: most requests raise none.
	return context.WithValue(ctx, recorderKey{}, &recorder{header: header})
}

// Add records msg as a warning of the request ctx belongs to; without a
// recorder (a call from inside the server) it is dropped, as kube does.
// Like kube, it drops a message that is not valid UTF-8 or holds a
// control character: a header cannot carry it.
func Add(ctx context.Context, msg string) {
	r, ok := ctx.Value(recorderKey{}).(*recorder)
	if !ok || msg == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.add(msg)
}

func (r *recorder) add(msg string) {
	if r.seen[msg] || (r.cutting && r.runes >= maxRunes) {
		return
	}
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	r.seen[msg] = true
	r.texts = append(r.texts, msg)
	if !headerSafe(msg) {
		return
	}
	text, n := msg, utf8.RuneCountInString(msg)
	if r.cutting {
		text, n = cut(text, n)
	}
	if r.cutting || r.runes+n <= maxRunes {
		r.write(text, n)
		return
	}
	// Too long: write everything again, cut.
	r.cutting = true
	r.runes = 0
	r.header.Del("Warning")
	for _, t := range r.texts {
		if headerSafe(t) {
			r.write(cut(t, utf8.RuneCountInString(t)))
		}
	}
}

func (r *recorder) write(text string, runes int) {
	r.header.Add("Warning", Header(text))
	r.runes += runes
}

// cut returns the first itemRunes runes of s, which has n.
func cut(s string, n int) (string, int) {
	if n <= itemRunes {
		return s, n
	}
	return string([]rune(s)[:itemRunes]), itemRunes
}

func headerSafe(s string) bool {
	return utf8.ValidString(s) && strings.IndexFunc(s, unicode.IsControl) < 0
}

// Header is msg as a Warning header value: code 299, no agent, the text
// quoted with its quotes and backslashes escaped (RFC 7234).
func Header(msg string) string {
	esc := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(msg)
	return `299 - "` + esc + `"`
}
