package wire

import "testing"

func TestWithoutTypeMeta(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"}}`, `{"metadata":{"name":"a"}}`},
		{`{"kind":"Deployment","apiVersion":"apps/v1","metadata":{},"spec":{}}`, `{"metadata":{},"spec":{}}`},
		// No TypeMeta set: nothing to take off.
		{`{"metadata":{"name":"a"}}`, `{"metadata":{"name":"a"}}`},
		// Only a kind, or the fields in another order (not encoding/json's
		// for a typed object): left as they are.
		{`{"kind":"ConfigMap","metadata":{}}`, `{"kind":"ConfigMap","metadata":{}}`},
		{`{"apiVersion":"v1","kind":"ConfigMap","metadata":{}}`, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{}}`},
		// Escapes are never in a kind; if they were, the item keeps it.
		{`{"kind":"A\"B","apiVersion":"v1","metadata":{}}`, `{"kind":"A\"B","apiVersion":"v1","metadata":{}}`},
		// Truncated or odd input is returned as it is.
		{`{"kind":"ConfigMap","apiVersion":"v1"}`, `{"kind":"ConfigMap","apiVersion":"v1"}`},
		{`{"kind":"ConfigMap`, `{"kind":"ConfigMap`},
		{``, ``},
		{`[]`, `[]`},
	} {
		if got := string(withoutTypeMeta([]byte(c.in))); got != c.want {
			t.Errorf("withoutTypeMeta(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}
