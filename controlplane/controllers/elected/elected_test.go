package elected_test

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/capstan-io/capstan/controlplane/controllers/elected"
	"github.com/capstan-io/capstan/internal/testkit"
)

func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) }

func TestIdentity(t *testing.T) {
	host, err := os.Hostname()
	if err != nil {
		t.Skip("no host name:", err)
	}
	a, b := elected.Identity(), elected.Identity()
	for _, id := range []string{a, b} {
		rest, ok := strings.CutPrefix(id, host+"_")
		if _, err := uuid.Parse(rest); !ok || err != nil {
			t.Errorf("identity %q is not %s_<uuid>", id, host)
		}
	}
	if a == b {
		t.Errorf("two identities are the same: %s", a)
	}
}

// campaign is one replica's run of elected.Run.
type campaign struct {
	cancel context.CancelFunc
	// led receives the context of each leadership.
	led  chan context.Context
	done chan struct{}
}

func start(client kubernetes.Interface, cfg elected.Config) *campaign {
	ctx, cancel := context.WithCancel(context.Background())
	c := &campaign{cancel: cancel, led: make(chan context.Context, 4), done: make(chan struct{})}
	cfg.Client, cfg.Namespace, cfg.Name = client, metav1.NamespaceDefault, "elected-test"
	cfg.Logger = slog.New(slog.DiscardHandler)
	go func() {
		defer close(c.done)
		elected.Run(ctx, cfg, func(lctx context.Context) { c.led <- lctx })
	}()
	return c
}

func wait30(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: not within 30s", what)
	}
}

func leads(t *testing.T, c *campaign, who string) context.Context {
	t.Helper()
	select {
	case lctx := <-c.led:
		return lctx
	case <-time.After(30 * time.Second):
		t.Fatalf("%s never led", who)
		return nil
	}
}

// TestRun: of two replicas, the first leads and the second waits; when
// the first stops, it gives the lease up, its loops' context ends, and
// the second leads. The lease records each holder and its duration, the
// default one when none is set.
func TestRun(t *testing.T) {
	s := testkit.StartServer(t, "--controllers=")
	client := s.Client(t)
	leases := client.CoordinationV1().Leases(metav1.NamespaceDefault)
	lease := func() *coordinationv1.Lease {
		t.Helper()
		l, err := leases.Get(context.Background(), "elected-test", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}

	a := start(client, elected.Config{Identity: "a", LeaseDuration: 4 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 100 * time.Millisecond})
	aLead := leads(t, a, "the first replica")
	if l := lease(); *l.Spec.HolderIdentity != "a" || *l.Spec.LeaseDurationSeconds != 4 {
		t.Errorf("lease held by %q for %ds, want a for 4s", *l.Spec.HolderIdentity, *l.Spec.LeaseDurationSeconds)
	}

	// b keeps trying while a renews; its lease duration is the default.
	b := start(client, elected.Config{Identity: "b", RetryPeriod: 200 * time.Millisecond})
	first := lease().Spec.RenewTime.Time
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return lease().Spec.RenewTime.After(first.Add(time.Second)), nil
	})
	if err != nil {
		t.Fatalf("a did not renew its lease: %v", err)
	}
	select {
	case <-b.led:
		t.Fatal("b led while a held the lease")
	default:
	}
	if aLead.Err() != nil {
		t.Fatal("a's leadership ended while it renewed")
	}

	a.cancel()
	wait30(t, a.done, "a's Run returning")
	wait30(t, aLead.Done(), "a's loops stopping")
	bLead := leads(t, b, "the second replica")
	if l := lease(); *l.Spec.HolderIdentity != "b" || *l.Spec.LeaseDurationSeconds != int32(elected.DefaultLeaseDuration/time.Second) {
		t.Errorf("lease held by %q for %ds, want b for the default 15s", *l.Spec.HolderIdentity, *l.Spec.LeaseDurationSeconds)
	}
	b.cancel()
	wait30(t, b.done, "b's Run returning")
	wait30(t, bLead.Done(), "b's loops stopping")
	if l := lease(); l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "" {
		t.Errorf("b stopped holding the lease as %q, want it given up", *l.Spec.HolderIdentity)
	}
}

// TestRunRefusesBadTiming: timings client-go's election refuses end Run
// at once, never leading.
func TestRunRefusesBadTiming(t *testing.T) {
	// The timings are refused before any request: no server is needed.
	client := kubernetes.NewForConfigOrDie(&rest.Config{Host: "https://127.0.0.1:1"})
	c := start(client, elected.Config{Identity: "x", LeaseDuration: time.Second, RenewDeadline: 2 * time.Second})
	wait30(t, c.done, "Run returning")
	select {
	case <-c.led:
		t.Error("led with a renew deadline past the lease duration")
	default:
	}
	c.cancel()
}
