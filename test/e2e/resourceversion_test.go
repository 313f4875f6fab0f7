package e2e

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The semantics of resourceVersion for get and list:
// https://kubernetes.io/docs/reference/using-api/api-concepts/#semantics-for-get-and-list
func TestResourceVersionGetList(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	cms := e.Clientset.CoreV1().ConfigMaps(ns)
	v1 := e.ConfigMap(t, ns, "a", nil)
	v1.Data["k"] = "two"
	v2, err := cms.Update(e2eutil.Ctx(t), v1, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.ConfigMap(t, ns, "b", nil)
	rv2, _ := strconv.ParseInt(v2.ResourceVersion, 10, 64)

	// "" is the latest state; N a state not older than N: at v2 the
	// latest, at v1 either (a cache a moment behind the writes may answer
	// v1 itself).
	for _, tc := range []struct{ rv, want, or string }{
		{"", "two", "two"}, {v2.ResourceVersion, "two", "two"}, {v1.ResourceVersion, "two", "v"},
	} {
		got, err := cms.Get(e2eutil.Ctx(t), "a", metav1.GetOptions{ResourceVersion: tc.rv})
		if err != nil || got.Data["k"] != tc.want && got.Data["k"] != tc.or {
			t.Errorf("get at resourceVersion %q = %v, %v; want k=%s or k=%s", tc.rv, got.Data, err, tc.want, tc.or)
		}
	}
	// "0" is any state the cache has, which may lag the writes by a
	// moment (kube's too): the latest once the cache has it.
	e2eutil.Eventually(t, 10*time.Second, `get at resourceVersion "0" reaching the latest`, func(c context.Context) (bool, error) {
		got, err := cms.Get(c, "a", metav1.GetOptions{ResourceVersion: "0"})
		return err == nil && got.Data["k"] == "two", nil
	})
	list := func(opts metav1.ListOptions) (string, error) {
		l, err := cms.List(e2eutil.Ctx(t), opts)
		if err != nil {
			return "", err
		}
		return names(l.Items) + "@" + l.ResourceVersion, nil
	}
	exact := func(rv string) metav1.ListOptions {
		return metav1.ListOptions{ResourceVersion: rv, ResourceVersionMatch: metav1.ResourceVersionMatchExact}
	}
	for _, tt := range []struct {
		opts metav1.ListOptions
		want string // names, or names@rv
	}{
		{metav1.ListOptions{}, "a,b"},
		{metav1.ListOptions{ResourceVersion: "0"}, "a,b"},
		{metav1.ListOptions{ResourceVersion: v1.ResourceVersion}, "a,b"},
		{metav1.ListOptions{ResourceVersion: v1.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}, "a,b"},
		{exact(v2.ResourceVersion), "a@" + v2.ResourceVersion},
		{exact(v1.ResourceVersion), "a@" + v1.ResourceVersion},
		// A paged list at a resourceVersion without a match is exact.
		{metav1.ListOptions{ResourceVersion: v2.ResourceVersion, Limit: 10}, "a@" + v2.ResourceVersion},
	} {
		got, err := list(tt.opts)
		if err != nil || !(got == tt.want || strings.HasPrefix(got, tt.want+"@")) {
			t.Errorf("list %+v = %s, %v; want %s", tt.opts, got, err, tt.want)
		}
	}
	old, err := cms.List(e2eutil.Ctx(t), exact(v1.ResourceVersion))
	if err != nil || old.Items[0].Data["k"] != "v" || old.Items[0].ResourceVersion != v1.ResourceVersion {
		t.Fatalf("exact list shows %+v, %v; want the first version", old.Items, err)
	}

	future := strconv.FormatInt(rv2+1000, 10)
	for _, try := range []func() error{
		func() error {
			_, err := cms.Get(e2eutil.Ctx(t), "a", metav1.GetOptions{ResourceVersion: future})
			return err
		},
		func() error { _, err := list(metav1.ListOptions{ResourceVersion: future}); return err },
		func() error { _, err := list(exact(future)); return err },
	} {
		s := e2eutil.WantStatus(t, try(), 504, metav1.StatusReasonTimeout, "")
		e2eutil.WantCause(t, s, metav1.CauseTypeResourceVersionTooLarge, "")
		if !strings.HasPrefix(s.Message, "Timeout: Too large resource version: "+future+", current: ") {
			t.Errorf("message = %q", s.Message)
		}
	}

	e.CompactEtcd(t)
	for _, opts := range []metav1.ListOptions{exact(v1.ResourceVersion), {ResourceVersion: v1.ResourceVersion, Limit: 1}} {
		s := expiredSoon(t, func() error { _, err := list(opts); return err })
		if s.Message != "The resourceVersion for the provided list is too old." {
			t.Errorf("list %+v after compaction: %q", opts, s.Message)
		}
	}
}

func TestResourceVersionInvalidOptions(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	e.ConfigMap(t, ns, "a", nil)
	e.ConfigMap(t, ns, "b", nil)
	page, err := e.Clientset.CoreV1().ConfigMaps(ns).List(e2eutil.Ctx(t), metav1.ListOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		query   string
		code    int
		reason  metav1.StatusReason
		message string
	}{
		{"resourceVersionMatch=Exact", 422, metav1.StatusReasonInvalid,
			`ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided`},
		{"resourceVersion=0&resourceVersionMatch=Exact", 422, metav1.StatusReasonInvalid,
			`ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"`},
		{"resourceVersion=1&resourceVersionMatch=Newest", 422, metav1.StatusReasonInvalid,
			`ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""`},
		{"limit=1&continue=" + page.Continue + "&resourceVersionMatch=NotOlderThan&resourceVersion=1", 422, metav1.StatusReasonInvalid, ""},
		{"limit=1&continue=" + page.Continue + "&resourceVersion=1", 400, metav1.StatusReasonBadRequest,
			"specifying resource version is not allowed when using continue"},
		{"sendInitialEvents=true", 422, metav1.StatusReasonInvalid,
			`ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list`},
		{"watch=true&resourceVersion=1&resourceVersionMatch=NotOlderThan", 422, metav1.StatusReasonInvalid,
			`ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided`},
		{"watch=true&sendInitialEvents=true", 422, metav1.StatusReasonInvalid,
			`ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan`},
		{"resourceVersion=abc", 400, metav1.StatusReasonBadRequest, ""},
		{"limit=x", 400, metav1.StatusReasonBadRequest, ""},
	} {
		r := e.Do(t, http.MethodGet, e2eutil.CMPath(ns, "")+"?"+tt.query, nil)
		if r.Code != tt.code {
			t.Errorf("?%s = %d %s, want %d", tt.query, r.Code, r.Body, tt.code)
			continue
		}
		r.WantStatus(t, tt.code, tt.reason, tt.message)
	}
	r := e.Do(t, http.MethodGet, e2eutil.CMPath(ns, "a")+"?resourceVersion=abc", nil)
	r.WantStatus(t, 400, metav1.StatusReasonBadRequest, "")
}
