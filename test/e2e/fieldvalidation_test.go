package e2e

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
)

// TestFieldValidation: unknown and duplicate fields are refused with
// Strict, reported as warnings with Warn (the default) and dropped with
// Ignore.
func TestFieldValidation(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	const unknown = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"%s","bogus":1},"data":{"k":"v"},"extra":true}`
	const duplicate = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"%s"},"data":{"k":"v"},"data":{"k":"w"}}`
	post := func(validation, body, name string) e2eutil.Response {
		return e.Do(t, http.MethodPost, e2eutil.CMPath(ns, "")+"?fieldValidation="+validation, []byte(e2eutil.Sprintf(body, name)))
	}

	r := post("Strict", unknown, "strict")
	r.WantStatus(t, 400, metav1.StatusReasonBadRequest,
		`ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "metadata.bogus", unknown field "extra"`)
	r = post("Strict", duplicate, "strict")
	r.WantStatus(t, 400, metav1.StatusReasonBadRequest,
		`ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: duplicate field "data"`)
	e.Do(t, http.MethodGet, e2eutil.CMPath(ns, "strict"), nil).WantStatus(t, 404, metav1.StatusReasonNotFound, "")

	r = post("Warn", unknown, "warn")
	if r.Code != 201 || !hasWarning(r, `unknown field "extra"`) || !hasWarning(r, `unknown field "metadata.bogus"`) {
		t.Fatalf("Warn = %d %v", r.Code, r.Header.Values("Warning"))
	}
	r = e.Do(t, http.MethodPost, e2eutil.CMPath(ns, ""), []byte(e2eutil.Sprintf(duplicate, "default")))
	if r.Code != 201 || !hasWarning(r, `duplicate field "data"`) {
		t.Fatalf("default (Warn) = %d %v", r.Code, r.Header.Values("Warning"))
	}
	r = post("Ignore", unknown, "ignore")
	if r.Code != 201 || len(r.Header.Values("Warning")) != 0 {
		t.Fatalf("Ignore = %d %v", r.Code, r.Header.Values("Warning"))
	}
	post("Sloppy", unknown, "x").WantStatus(t, 422, metav1.StatusReasonInvalid,
		`CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Sloppy": supported values: "", "Ignore", "Strict", "Warn"`)

	// client-go hands warnings to the config's WarningHandler.
	got := &e2eutil.Warnings{}
	c := e.ClientWith(t, func(cfg *rest.Config) { cfg.WarningHandler = got })
	_, err := c.CoreV1().ConfigMaps(ns).Patch(e2eutil.Ctx(t), "warn", types.MergePatchType, []byte(`{"spec":{"x":1}}`),
		metav1.PatchOptions{FieldValidation: "Warn"})
	if err != nil || !strings.Contains(got.Joined(), `unknown field "spec"`) {
		t.Fatalf("patch with Warn: %v, warnings %q", err, got.Joined())
	}
	_, err = c.CoreV1().ConfigMaps(ns).Patch(e2eutil.Ctx(t), "warn", types.MergePatchType, []byte(`{"spec":{"x":1}}`),
		metav1.PatchOptions{FieldValidation: "Strict"})
	s := e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, "")
	e2eutil.WantCause(t, s, metav1.CauseTypeFieldValueInvalid, "patch")
	if !strings.HasSuffix(s.Message, `strict decoding error: unknown field "spec"`) {
		t.Fatalf("message = %q", s.Message)
	}
	cm, err := c.CoreV1().ConfigMaps(ns).Get(e2eutil.Ctx(t), "warn", metav1.GetOptions{})
	if err != nil || cm.Data["k"] != "v" {
		t.Fatalf("after the patches: %+v, %v", cm, err)
	}
}

func hasWarning(r e2eutil.Response, text string) bool {
	for _, w := range r.Header.Values("Warning") {
		if strings.Contains(strings.ReplaceAll(w, `\"`, `"`), text) {
			return true
		}
	}
	return false
}
