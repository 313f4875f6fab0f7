package safejsonpatch

import (
	"errors"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
)

// TestApply: patches apply as the library applies them; its failures stay
// its errors; the patches it panics on are errors too.
func TestApply(t *testing.T) {
	doc := `{"data":{"a":"1"}}`
	for _, tc := range []struct {
		name, patch, want string
		testFailed, err   bool
	}{
		{name: "add", patch: `[{"op":"add","path":"/data/b","value":"2"}]`, want: `{"data":{"a":"1","b":"2"}}`},
		{name: "a failed test", patch: `[{"op":"test","path":"/data/a","value":"2"}]`, testFailed: true, err: true},
		{name: "a test of the whole document without a value (the library panics)", patch: `[{"op":"test","path":""}]`, err: true},
		{name: "after another operation", patch: `[{"op":"add","path":"00000/0","00000":"0"},{"op":"test","path":""}]`, err: true},
		{name: "a test of the whole document", patch: `[{"op":"test","path":"","value":{"data":{"a":"1"}}}]`, want: doc},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := jsonpatch.DecodePatch([]byte(tc.patch))
			if err != nil {
				t.Fatal(err)
			}
			got, err := Apply(p, []byte(doc))
			if (err != nil) != tc.err || errors.Is(err, jsonpatch.ErrTestFailed) != tc.testFailed {
				t.Fatalf("error %v; want an error %v, a failed test %v", err, tc.err, tc.testFailed)
			}
			if err == nil && string(got) != tc.want {
				t.Errorf("patched %s, want %s", got, tc.want)
			}
		})
	}
}
