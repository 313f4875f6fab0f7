package e2e

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

func TestWatchEvents(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	cms := e.Clientset.CoreV1().ConfigMaps(ns)
	list, err := cms.List(e2eutil.Ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := cms.Watch(e2eutil.Ctx(t), metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	sel, err := cms.Watch(e2eutil.Ctx(t), metav1.ListOptions{ResourceVersion: list.ResourceVersion, LabelSelector: "sel=yes"})
	if err != nil {
		t.Fatal(err)
	}
	defer sel.Stop()

	created := e.ConfigMap(t, ns, "a", map[string]string{"sel": "yes"})
	created.Labels["sel"] = "no"
	updated, err := cms.Update(e2eutil.Ctx(t), created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(e2eutil.Ctx(t), "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	wantEvent(t, w, watch.Added, "a", created.ResourceVersion)
	wantEvent(t, w, watch.Modified, "a", updated.ResourceVersion)
	deleted := wantEvent(t, w, watch.Deleted, "a", "")
	if deleted.ResourceVersion == updated.ResourceVersion || deleted.Labels["sel"] != "no" {
		t.Fatalf("DELETED carries %s %v, want the last state at the deletion's revision", deleted.ResourceVersion, deleted.Labels)
	}
	// Leaving the selection is a DELETED event with the object's last
	// selected state at the revision of the change.
	wantEvent(t, sel, watch.Added, "a", created.ResourceVersion)
	if gone := wantEvent(t, sel, watch.Deleted, "a", updated.ResourceVersion); gone.Labels["sel"] != "yes" {
		t.Fatalf("DELETED on leaving the selection carries labels %v", gone.Labels)
	}

	// Without a resourceVersion a watch starts with the current objects.
	e.ConfigMap(t, ns, "b", nil)
	fromNow, err := cms.Watch(e2eutil.Ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer fromNow.Stop()
	wantEvent(t, fromNow, watch.Added, "b", "")
	fromAny, err := cms.Watch(e2eutil.Ctx(t), metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	defer fromAny.Stop()
	wantEvent(t, fromAny, watch.Added, "b", "")
	// A watch of one object by name.
	one, err := cms.Watch(e2eutil.Ctx(t), metav1.ListOptions{FieldSelector: "metadata.name=c"})
	if err != nil {
		t.Fatal(err)
	}
	defer one.Stop()
	e.ConfigMap(t, ns, "d", nil)
	e.ConfigMap(t, ns, "c", nil)
	wantEvent(t, one, watch.Added, "c", "")
	wantEvent(t, fromNow, watch.Added, "d", "")
}

func TestWatchBookmarksAndInitialEvents(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	cms := e.Clientset.CoreV1().ConfigMaps(ns)
	a := e.ConfigMap(t, ns, "a", nil)
	e.ConfigMap(t, ns, "b", nil)

	w, err := cms.Watch(e2eutil.Ctx(t), metav1.ListOptions{
		SendInitialEvents: ptr.To(true), AllowWatchBookmarks: true,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, TimeoutSeconds: ptr.To[int64](5),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	wantEvent(t, w, watch.Added, "a", a.ResourceVersion)
	wantEvent(t, w, watch.Added, "b", "")
	end := wantEvent(t, w, watch.Bookmark, "", "")
	if end.Annotations[metav1.InitialEventsAnnotationKey] != "true" || end.ResourceVersion == "" {
		t.Fatalf("initial events end with %+v, want the %s bookmark", end.ObjectMeta, metav1.InitialEventsAnnotationKey)
	}
	e.ConfigMap(t, ns, "c", nil)
	wantEvent(t, w, watch.Added, "c", "")
	// Writes the watch does not select move the resourceVersion on: a
	// watch that takes bookmarks learns it before it times out, so that
	// its client resumes from there.
	// A bookmark may come before that write too (the namespace's own
	// writes move the resourceVersion on): skip those.
	elsewhere := e.ConfigMap(t, e.Namespace(t), "elsewhere", nil)
	for {
		progress := wantEvent(t, w, watch.Bookmark, "", "")
		if progress.Annotations[metav1.InitialEventsAnnotationKey] != "" {
			t.Fatalf("progress bookmark = %+v, want no %s annotation", progress.ObjectMeta, metav1.InitialEventsAnnotationKey)
		}
		if rvNumber(t, progress.ResourceVersion) >= rvNumber(t, elsewhere.ResourceVersion) {
			break
		}
	}
	for range w.ResultChan() {
	}

	// sendInitialEvents=false from a resourceVersion: only what follows.
	later, err := cms.Watch(e2eutil.Ctx(t), metav1.ListOptions{
		SendInitialEvents: ptr.To(false), ResourceVersion: end.ResourceVersion,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer later.Stop()
	wantEvent(t, later, watch.Added, "c", "")
}

func TestWatchExpiredAndTimeout(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	cms := e.Clientset.CoreV1().ConfigMaps(ns)
	old := e.ConfigMap(t, ns, "a", nil)
	e.ConfigMap(t, ns, "b", nil)
	e.ConfigMap(t, ns, "c", nil)
	compacted := e.CompactEtcd(t) // the revision after old's is gone
	s := expiredSoon(t, func() error {
		w, err := cms.Watch(e2eutil.Ctx(t), metav1.ListOptions{ResourceVersion: old.ResourceVersion})
		if err != nil {
			return err
		}
		defer w.Stop()
		ev := e2eutil.NextEvent(t, w)
		if ev.Type != watch.Error {
			return nil
		}
		if _, open := <-w.ResultChan(); open {
			t.Fatal("watch goes on after its ERROR event")
		}
		return apierrors.FromObject(ev.Object)
	})
	// The number in brackets is the oldest revision the server still
	// has: the compacted one, or, if the cache had not reached that yet
	// when it learned of the compaction, the cache's revision then.
	var asked, oldest int64
	_, err := fmt.Sscanf(s.Message, "too old resource version: %d (%d)", &asked, &oldest)
	if err != nil || s.Code != 410 || strconv.FormatInt(asked, 10) != old.ResourceVersion ||
		oldest <= asked || oldest > compacted || s.Message != fmt.Sprintf("too old resource version: %d (%d)", asked, oldest) {
		t.Errorf("watch from a compacted resourceVersion: %d %q, want 410 \"too old resource version: %s (N)\" with %s < N <= %d",
			s.Code, s.Message, old.ResourceVersion, old.ResourceVersion, compacted)
	}

	begin := time.Now()
	timed, err := cms.Watch(e2eutil.Ctx(t), metav1.ListOptions{TimeoutSeconds: ptr.To[int64](1)})
	if err != nil {
		t.Fatal(err)
	}
	for range timed.ResultChan() {
	}
	if took := time.Since(begin); took < time.Second || took > 10*time.Second {
		t.Fatalf("a watch with timeoutSeconds=1 lasted %s", took)
	}
}

// wantEvent reads the next event and checks its type, the config map's
// name and, unless empty, its resourceVersion.
func wantEvent(t *testing.T, w watch.Interface, typ watch.EventType, name, rv string) *corev1.ConfigMap {
	t.Helper()
	ev := e2eutil.NextEvent(t, w)
	cm, ok := ev.Object.(*corev1.ConfigMap)
	if ev.Type != typ || !ok || cm.Name != name || (rv != "" && cm.ResourceVersion != rv) {
		t.Fatalf("event = %s %+v, want %s %q at %q", ev.Type, ev.Object, typ, name, rv)
	}
	return cm
}

func rvNumber(t *testing.T, rv string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil {
		t.Fatalf("resourceVersion %q: %v", rv, err)
	}
	return n
}

// TestWatchFormatsOfOneEvent: watches of one namespace in JSON, protobuf,
// metadata only and as a Table get the same event each in its own form
// (the watch cache hands every watch the event's object shared, and each
// wire format is encoded once).
func TestWatchFormatsOfOneEvent(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	proto := e.ClientWith(t, func(cfg *rest.Config) {
		cfg.ContentType, cfg.AcceptContentTypes = protobuf, protobuf
	})
	mc, err := metadata.NewForConfig(e.Config)
	if err != nil {
		t.Fatal(err)
	}
	list, err := e.Clientset.CoreV1().ConfigMaps(ns).List(e2eutil.Ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	from := metav1.ListOptions{ResourceVersion: list.ResourceVersion}
	var typed []watch.Interface
	for _, c := range []kubernetes.Interface{e.Clientset, e.Clientset, proto, proto} {
		w, err := c.CoreV1().ConfigMaps(ns).Watch(e2eutil.Ctx(t), from)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		typed = append(typed, w)
	}
	meta, err := mc.Resource(corev1.SchemeGroupVersion.WithResource("configmaps")).Namespace(ns).Watch(e2eutil.Ctx(t), from)
	if err != nil {
		t.Fatal(err)
	}
	defer meta.Stop()

	created := e.ConfigMap(t, ns, "shared", map[string]string{"l": "v"})
	for i, w := range typed {
		got := wantEvent(t, w, watch.Added, "shared", created.ResourceVersion)
		if got.Labels["l"] != "v" || got.Namespace != ns || got.UID != created.UID {
			t.Errorf("watch %d: got %+v, want %+v", i, got, created)
		}
	}
	select {
	case ev := <-meta.ResultChan():
		pom, ok := ev.Object.(*metav1.PartialObjectMetadata)
		if ev.Type != watch.Added || !ok || pom.Name != "shared" || pom.ResourceVersion != created.ResourceVersion || pom.UID != created.UID {
			t.Errorf("metadata watch: %s %#v", ev.Type, ev.Object)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no event on the metadata watch")
	}
	// A Table watch from the same revision replays the event from the
	// cache's history, and ends after a second.
	table := e.Do(t, http.MethodGet, "/api/v1/namespaces/"+ns+"/configmaps?watch=1&timeoutSeconds=1&resourceVersion="+list.ResourceVersion,
		nil, "Accept", "application/json;as=Table;g=meta.k8s.io;v=v1")
	var ev struct {
		Type   string
		Object metav1.Table
	}
	if err := json.NewDecoder(bytes.NewReader(table.Body)).Decode(&ev); err != nil || table.Code != 200 ||
		ev.Type != "ADDED" || ev.Object.Kind != "Table" || len(ev.Object.Rows) != 1 || ev.Object.Rows[0].Cells[0] != "shared" {
		t.Errorf("Table watch = %d %v: %s", table.Code, err, table.Body)
	}
}
