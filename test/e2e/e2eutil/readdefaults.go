package e2eutil

import (
	"bytes"
	"encoding/json"
	"testing"
)

// SameAsGets lists path at resourceVersion rv, checks that it has n items
// and that each is what a GET of it answers, and returns the items.
func (e *Env) SameAsGets(t *testing.T, path, rv string, n int) []map[string]any {
	t.Helper()
	r := e.Do(t, "GET", path+"?resourceVersion="+rv, nil)
	var list struct{ Items []map[string]any }
	if err := json.Unmarshal(r.Body, &list); err != nil || r.Code != 200 {
		t.Errorf("list %s: %d %v: %.300s", path, r.Code, err, r.Body)
		return nil
	}
	if len(list.Items) != n {
		t.Errorf("list %s at %q: %d items, want %d", path, rv, len(list.Items), n)
		return nil
	}
	for _, item := range list.Items {
		name := item["metadata"].(map[string]any)["name"].(string)
		g := e.Do(t, "GET", path+"/"+name, nil)
		var got map[string]any
		if err := json.Unmarshal(g.Body, &got); err != nil {
			t.Errorf("get %s/%s: %v", path, name, err)
			continue
		}
		// The kinds are left out: a GET has them, a list's items need not.
		listed, _ := json.Marshal(withoutKind(item))
		read, _ := json.Marshal(withoutKind(got))
		if !bytes.Equal(listed, read) {
			t.Errorf("%s/%s:\n listed %s\n    get %s", path, name, listed, read)
		}
	}
	return list.Items
}

func withoutKind(obj map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range obj {
		if k != "apiVersion" && k != "kind" {
			out[k] = v
		}
	}
	return out
}
