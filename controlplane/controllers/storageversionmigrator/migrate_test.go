package storageversionmigrator_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	svmv1 "k8s.io/api/storagemigration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	svm "github.com/capstan-io/capstan/controlplane/controllers/storageversionmigrator"
	"github.com/capstan-io/capstan/internal/testkit"
)

func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) }

const ns = "svm"

// protobuf is the prefix of capstan's storage encoding.
var protobuf = []byte("k8s\x00")

// TestMigrate runs migrations on a server whose own migrator is off, with
// config maps stored as JSON below the API (as an older server may have
// left them): an object is written again only if it was last written at
// or before the migration's resource version; a resource discovery does
// not know fails the migration only a minute after its creation.
func TestMigrate(t *testing.T) {
	s := testkit.StartServer(t, "--controllers=")
	cfg := rest.CopyConfig(s.Config)
	cfg.QPS = -1
	client := kubernetes.NewForConfigOrDie(cfg)
	c, err := svm.New(svm.Config{Client: client, Dynamic: dynamic.NewForConfigOrDie(cfg), Logger: slog.New(slog.DiscardHandler),
		Mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(client.Discovery()))})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	putJSON(t, s, "old")
	putJSON(t, s, "late")
	old, err := client.CoreV1().ConfigMaps(ns).Get(ctx, "old", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svms := client.StoragemigrationV1().StorageVersionMigrations()

	// A migration that began after "old" was written and before "late".
	resumed := create(t, client, "resumed", "", "configmaps")
	resumed.Status.ResourceVersion = old.ResourceVersion
	if resumed, err = svms.UpdateStatus(ctx, resumed, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := svm.Migrate(ctx, c, resumed); err != nil {
		t.Fatal(err)
	}
	if v := s.EtcdValue(t, "/registry/configmaps/svm/old"); !bytes.HasPrefix(v, protobuf) {
		t.Errorf("old is stored as %.20q, want it written again", v)
	}
	if v := s.EtcdValue(t, "/registry/configmaps/svm/late"); !bytes.HasPrefix(v, []byte("{")) {
		t.Errorf("late is stored as %.20q, want it left as it was", v)
	}
	got := conditions(t, client, "resumed", old.ResourceVersion)
	want := "Running=False StorageVersionMigrationSucceeded: Migration completed; Succeeded=True StorageVersionMigrationSucceeded: Migration completed"
	if got != want {
		t.Errorf("resumed: %s\nwant %s", got, want)
	}

	unknown := create(t, client, "unknown", "example.com", "widgets")
	if err := svm.Migrate(ctx, c, unknown.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	if got := conditions(t, client, "unknown", ""); got != "" {
		t.Errorf("a migration of an unknown resource made just now: %s, want it left to discovery for a minute", got)
	}
	unknown.CreationTimestamp = metav1.NewTime(time.Now().Add(-2 * time.Minute))
	if err := svm.Migrate(ctx, c, unknown); err != nil {
		t.Fatal(err)
	}
	got = conditions(t, client, "unknown", "")
	want = "Running=False StorageVersionMigrationFailed: no matches for example.com/, Resource=widgets; " +
		"Failed=True StorageVersionMigrationFailed: no matches for example.com/, Resource=widgets"
	if got != want {
		t.Errorf("unknown, after a minute: %s\nwant %s", got, want)
	}

	// The loop takes a new migration from its start: "late" too.
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); c.Run(runCtx) }()
	defer func() { cancel(); <-done }()
	create(t, client, "full", "", "configmaps")
	var full *svmv1.StorageVersionMigration
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		full, err = svms.Get(ctx, "full", metav1.GetOptions{})
		return err == nil && meta.IsStatusConditionTrue(full.Status.Conditions, string(svmv1.MigrationSucceeded)), err
	})
	if err != nil {
		t.Fatalf("the loop's migration did not succeed: %v", err)
	}
	if v := s.EtcdValue(t, "/registry/configmaps/svm/late"); !bytes.HasPrefix(v, protobuf) {
		t.Errorf("late is stored as %.20q after a full migration", v)
	}
	if full.Status.ResourceVersion == "" || len(full.Status.Conditions) != 2 {
		t.Errorf("full: status %+v, want its resource version and two conditions", full.Status)
	}
}

// putJSON stores the config map svm/name as JSON, below the API.
func putJSON(t *testing.T, s *testkit.Server, name string) {
	t.Helper()
	s.EtcdPut(t, "/registry/configmaps/"+ns+"/"+name, []byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"`+name+
		`","namespace":"`+ns+`","uid":"uid-`+name+`","creationTimestamp":"2026-01-01T00:00:00Z"},"data":{"a":"b"}}`))
}

func create(t *testing.T, client kubernetes.Interface, name, group, resource string) *svmv1.StorageVersionMigration {
	t.Helper()
	m := &svmv1.StorageVersionMigration{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: svmv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Group: group, Resource: resource}}}
	m, err := client.StoragemigrationV1().StorageVersionMigrations().Create(context.Background(), m, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// conditions renders the stored migration's conditions, checking its
// status.resourceVersion is rv.
func conditions(t *testing.T, client kubernetes.Interface, name, rv string) string {
	t.Helper()
	m, err := client.StoragemigrationV1().StorageVersionMigrations().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Status.ResourceVersion != rv {
		t.Errorf("%s: status.resourceVersion %q, want %q", name, m.Status.ResourceVersion, rv)
	}
	var out string
	for i, c := range m.Status.Conditions {
		if i > 0 {
			out += "; "
		}
		out += c.Type + "=" + string(c.Status) + " " + c.Reason + ": " + c.Message
	}
	return out
}
