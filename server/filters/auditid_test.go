package filters

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/uuid"

	"github.com/capstan-io/capstan/audit"
)

// TestAuditID checks the Audit-ID response header: the client's own
// Audit-ID, else a new UUID, and one set already (by an outer server of
// the chain) is kept.
func TestAuditID(t *testing.T) {
	h := Chain(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), WithAuditID(audit.Config{}))
	for _, tc := range []struct {
		name, sent, preset, want string
	}{
		{name: "the client's", sent: "abc-123", want: "abc-123"},
		{name: "a new one"},
		{name: "one set already", sent: "abc-123", preset: "outer", want: "outer"},
	} {
		r := httptest.NewRequest(http.MethodGet, "/api/v1/pods", nil)
		if tc.sent != "" {
			r.Header.Set("Audit-ID", tc.sent)
		}
		w := httptest.NewRecorder()
		if tc.preset != "" {
			w.Header().Set("Audit-ID", tc.preset)
		}
		h.ServeHTTP(w, r)
		got := w.Header().Values("Audit-ID")
		if len(got) != 1 {
			t.Errorf("%s: Audit-ID headers %v, want one", tc.name, got)
			continue
		}
		if tc.want == "" {
			if _, err := uuid.Parse(got[0]); err != nil {
				t.Errorf("%s: Audit-ID %q is not a UUID", tc.name, got[0])
			}
		} else if got[0] != tc.want {
			t.Errorf("%s: Audit-ID %q, want %q", tc.name, got[0], tc.want)
		}
	}
}
