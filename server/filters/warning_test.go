package filters

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/capstan-io/capstan/request"
	"github.com/capstan-io/capstan/warning"
)

// TestWarningRecorder checks that a warning the handler raises through
// its context reaches the response, behind the timeout filter (which sets
// the recorder up) as well as for a watch, which that filter leaves alone.
func TestWarningRecorder(t *testing.T) {
	h := Chain(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		warning.Add(r.Context(), "careful")
		w.WriteHeader(http.StatusOK)
	}), WithRequestInfo(request.NewParser()), WithTimeout(time.Minute), WithWarningRecorder())
	for _, target := range []string{"/api/v1/namespaces/default/configmaps", "/api/v1/namespaces/default/configmaps?watch=true"} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
		if got, want := w.Header().Values("Warning"), []string{`299 - "careful"`}; len(got) != 1 || got[0] != want[0] {
			t.Errorf("GET %s: Warning %q, want %q", target, got, want)
		}
	}
}
