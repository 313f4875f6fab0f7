package backend

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

// recorder is a backend that keeps the batches it is handed.
type recorder struct{ batches [][]*auditv1.Event }

func (r *recorder) ProcessEvents(events ...*auditv1.Event) bool {
	r.batches = append(r.batches, events)
	return true
}
func (r *recorder) Run(context.Context) {}
func (r *recorder) Shutdown()           {}
func (r *recorder) String() string      { return "recorder" }

func sized(id string, level auditv1.Level, objectBytes, annotationBytes int) *auditv1.Event {
	ev := event(id)
	ev.Level = level
	if objectBytes > 0 {
		ev.RequestObject = &runtime.Unknown{Raw: []byte(`"` + strings.Repeat("x", objectBytes) + `"`)}
	}
	if annotationBytes > 0 {
		ev.Annotations = map[string]string{"a": strings.Repeat("y", annotationBytes)}
	}
	return ev
}

func TestTruncate(t *testing.T) {
	small := sized("small", auditv1.LevelRequest, 0, 0)
	size, err := encodedSize(small)
	if err != nil {
		t.Fatal(err)
	}
	limit := size + 500
	tests := []struct {
		name        string
		events      []*auditv1.Event
		wantBatches [][]string // audit IDs per batch
		truncated   []string
	}{
		{"small events pass in one batch", []*auditv1.Event{small, small}, [][]string{{"small", "small"}}, nil},
		{"a large Request event loses its objects", []*auditv1.Event{sized("big", auditv1.LevelRequestResponse, 1000, 0)}, [][]string{{"big"}}, []string{"big"}},
		{"a large Metadata event is dropped", []*auditv1.Event{sized("meta", auditv1.LevelMetadata, 0, 1000), small}, [][]string{{"small"}}, nil},
		{"still too large after truncation is dropped", []*auditv1.Event{sized("huge", auditv1.LevelRequest, 1000, 1000)}, nil, nil},
		{"batches split at the batch size", []*auditv1.Event{sized("a", auditv1.LevelRequest, 400, 0), sized("b", auditv1.LevelRequest, 400, 0), small},
			[][]string{{"a"}, {"b", "small"}}, nil},
	}
	for _, tt := range tests {
		rec := &recorder{}
		b := WithTruncate(rec, TruncateConfig{Enabled: true, MaxEventSize: limit, MaxBatchSize: 2*size + 600}, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if !b.ProcessEvents(tt.events...) {
			t.Errorf("%s: ProcessEvents failed", tt.name)
		}
		var got [][]string
		var truncated []string
		for _, batch := range rec.batches {
			var ids []string
			for _, ev := range batch {
				ids = append(ids, string(ev.AuditID))
				if ev.Annotations[TruncatedAnnotation] == "true" {
					truncated = append(truncated, string(ev.AuditID))
					if ev.RequestObject != nil || ev.ResponseObject != nil {
						t.Errorf("%s: truncated event %s kept its objects", tt.name, ev.AuditID)
					}
				}
			}
			got = append(got, ids)
		}
		if !equalBatches(got, tt.wantBatches) || strings.Join(truncated, ",") != strings.Join(tt.truncated, ",") {
			t.Errorf("%s: batches %v truncated %v; want %v, %v", tt.name, got, truncated, tt.wantBatches, tt.truncated)
		}
	}
	if small.Annotations != nil {
		t.Error("truncation changed the caller's event")
	}
}

func equalBatches(a, b [][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if strings.Join(a[i], ",") != strings.Join(b[i], ",") {
			return false
		}
	}
	return true
}

func TestTruncateConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		c    TruncateConfig
		want string
	}{
		{DefaultTruncate, ""},
		{TruncateConfig{MaxEventSize: 0, MaxBatchSize: 10}, "invalid audit truncate log max event size 0, must be a positive number"},
		{TruncateConfig{MaxEventSize: 10, MaxBatchSize: 5}, "invalid audit truncate log max batch size 5, must be greater than max event size (10)"},
	} {
		err := tc.c.Validate("log")
		if (err == nil) != (tc.want == "") || (err != nil && err.Error() != tc.want) {
			t.Errorf("%+v: %v, want %q", tc.c, err, tc.want)
		}
	}
}
