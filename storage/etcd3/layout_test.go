package etcd3

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/capstan-io/capstan/storage"
)

func testConfigMap(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Data: map[string]string{"k": "v"}}
}

// TestStoredLayout checks what lands in etcd: kube's key and kube's
// protobuf envelope, without resourceVersion.
func TestStoredLayout(t *testing.T) {
	ctx := t.Context()
	s := newTestStore(t, server.Client())
	out := &corev1.ConfigMap{}
	if err := s.Create(ctx, "/configmaps/ns/a", testConfigMap("a"), out, 0); err != nil {
		t.Fatal(err)
	}
	resp, err := server.Client().Get(ctx, s.keys.pathPrefix+"configmaps/ns/a")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("raw key not found: %v %v", resp, err)
	}
	kv := resp.Kvs[0]
	if !bytes.HasPrefix(kv.Value, []byte("k8s\x00")) {
		t.Fatalf("stored value is not kube's protobuf: %q", kv.Value)
	}
	if strconv.FormatInt(kv.ModRevision, 10) != out.ResourceVersion {
		t.Fatalf("resourceVersion %s, mod revision %d", out.ResourceVersion, kv.ModRevision)
	}
	var raw corev1.ConfigMap
	if _, _, err := s.codec.Decode(kv.Value, nil, &raw); err != nil {
		t.Fatal(err)
	}
	if raw.ResourceVersion != "" || raw.Name != "a" {
		t.Fatalf("stored object %+v, want no resourceVersion", raw.ObjectMeta)
	}
}

// TestReadsJSON reads a value stored as JSON, as some kube-apiserver
// configurations write.
func TestReadsJSON(t *testing.T) {
	ctx := t.Context()
	s := newTestStore(t, server.Client())
	value := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"j","namespace":"ns"},"data":{"x":"y"}}`
	put, err := server.Client().Put(ctx, s.keys.pathPrefix+"configmaps/ns/j", value)
	if err != nil {
		t.Fatal(err)
	}
	out := &corev1.ConfigMap{}
	if err := s.Get(ctx, "/configmaps/ns/j", storage.GetOptions{}, out); err != nil {
		t.Fatal(err)
	}
	if out.Data["x"] != "y" || out.ResourceVersion != strconv.FormatInt(put.Header.Revision, 10) {
		t.Fatalf("Get = %+v", out)
	}
}

// TestUndecodableValue: bytes that do not decode are an ErrInvalidObject
// for every operation, and an error event for a watch, never a panic.
func TestUndecodableValue(t *testing.T) {
	ctx := t.Context()
	s := newTestStore(t, server.Client())
	rev := currentRevision(t, s)
	for _, v := range []string{"garbage", "k8s\x00\x0a\xff\xff\xff\xff", "{"} {
		if _, err := server.Client().Put(ctx, s.keys.pathPrefix+"configmaps/ns/bad", v); err != nil {
			t.Fatal(err)
		}
		err := s.Get(ctx, "/configmaps/ns/bad", storage.GetOptions{}, &corev1.ConfigMap{})
		expectInvalid(t, "Get", err)
		err = s.GetList(ctx, "/configmaps", storage.ListOptions{Recursive: true}, &corev1.ConfigMapList{})
		expectStoreReadError(t, err, s.keys.pathPrefix+"configmaps/ns/bad")
		err = s.GuaranteedUpdate(ctx, "/configmaps/ns/bad", &corev1.ConfigMap{}, false, nil,
			func(in kruntime.Object, _ storage.ResponseMeta) (kruntime.Object, *uint64, error) {
				return in, nil, nil
			}, nil)
		expectInvalid(t, "GuaranteedUpdate", err)
		err = s.Delete(ctx, "/configmaps/ns/bad", &corev1.ConfigMap{}, nil, nil, nil)
		expectInvalid(t, "Delete", err)
	}
	w, err := s.Watch(ctx, "/configmaps", storage.ListOptions{Recursive: true, ResourceVersion: strconv.FormatInt(rev, 10)})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	select {
	case e := <-w.ResultChan():
		st, ok := e.Object.(*metav1.Status)
		if e.Type != watch.Error || !ok || st.Code != http.StatusInternalServerError {
			t.Fatalf("watch of a bad value gave %s %+v", e.Type, e.Object)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no error event")
	}
}

// expectStoreReadError checks that a list failed as kube's lists of
// undecodable values fail: a 500 StoreReadError naming each bad key.
func expectStoreReadError(t *testing.T, err error, etcdKey string) {
	t.Helper()
	var se *apierrors.StatusError
	if !errors.As(err, &se) || se.ErrStatus.Code != http.StatusInternalServerError ||
		se.ErrStatus.Reason != metav1.StatusReasonStoreReadError || len(se.ErrStatus.Details.Causes) != 1 ||
		se.ErrStatus.Details.Causes[0].Field != etcdKey ||
		!strings.Contains(se.ErrStatus.Message, "AdditionalErrorMsg: object not decodable revision=") {
		t.Fatalf("GetList of an undecodable value: %v, want kube's StoreReadError", err)
	}
}

func expectInvalid(t *testing.T, op string, err error) {
	t.Helper()
	if !errors.Is(err, storage.ErrInvalidObject) {
		t.Fatalf("%s of an undecodable value: %v, want ErrInvalidObject", op, err)
	}
}

func currentRevision(t *testing.T, s *Store) int64 {
	t.Helper()
	rev, err := s.currentRevision(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return rev
}

// TestWatchesLeaveNoGoroutines stops many watches, by Stop and by their
// context, and checks that their goroutines end. (The etcd client may keep
// its shared gRPC watch stream open for the next watch; that is not ours.)
func TestWatchesLeaveNoGoroutines(t *testing.T) {
	s := newTestStore(t, server.Client())
	if err := s.Create(t.Context(), "/configmaps/ns/a", testConfigMap("a"), &corev1.ConfigMap{}, 0); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		ctx, cancel := context.WithCancel(t.Context())
		w, err := s.Watch(ctx, "/configmaps", storage.ListOptions{Recursive: true, ProgressNotify: true})
		if err != nil {
			t.Fatal(err)
		}
		<-w.ResultChan() // the initial ADDED: the watch runs
		if i%2 == 0 {
			cancel()
		} else {
			w.Stop()
		}
		for range w.ResultChan() {
		}
		cancel()
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, stacks := watcherGoroutines()
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d watch goroutines still running:\n%s", n, stacks)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// watcherGoroutines counts the goroutines running a watcher's code.
func watcherGoroutines() (int, string) {
	buf := make([]byte, 1<<22)
	stacks := string(buf[:runtime.Stack(buf, true)])
	n := 0
	for _, g := range strings.Split(stacks, "\n\n") {
		if strings.Contains(g, "storage/etcd3.(*watcher)") {
			n++
		}
	}
	return n, stacks
}
