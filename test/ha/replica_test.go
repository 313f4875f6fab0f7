package ha

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/capstan-io/capstan/internal/testkit"
	"github.com/capstan-io/capstan/internal/testpki"
)

// leaseDuration is the elected loops' lease duration in the test: a dead
// leader is replaced within it, and no time without a leader may be
// longer.
const leaseDuration = 4 * time.Second

// cluster is the replicas' shared PKI and flags.
type cluster struct {
	pki   string
	flags []string
}

// newCluster writes one serving certificate, client CA, admin certificate
// and service account key pair for every replica, as an operator deploys
// them, and the flags that reach etcd.
func newCluster(t *testing.T, dir string, etcd *etcdCluster) *cluster {
	pki := filepath.Join(dir, "pki")
	ca := testpki.NewCA(t, pki, "ca")
	ca.Issue(t, pki, "apiserver", testpki.Leaf{CN: "kube-apiserver", Server: true})
	ca.Issue(t, pki, "admin", testpki.Leaf{CN: "admin", Orgs: []string{"system:masters"}, Client: true})
	testpki.ServiceAccountKeys(t, pki)
	return &cluster{pki: pki, flags: []string{
		"--etcd-servers=" + strings.Join(etcd.ClientURLs, ","),
		"--etcd-cafile=" + etcd.CA, "--etcd-certfile=" + etcd.Cert, "--etcd-keyfile=" + etcd.Key,
		"--tls-cert-file=" + filepath.Join(pki, "apiserver.crt"), "--tls-private-key-file=" + filepath.Join(pki, "apiserver.key"),
		"--client-ca-file=" + filepath.Join(pki, "ca.crt"),
		"--service-account-issuer=https://kubernetes.default.svc", "--service-account-key-file=" + filepath.Join(pki, "sa.pub"),
		"--service-account-signing-key-file=" + filepath.Join(pki, "sa.key"),
		"--bind-address=127.0.0.1",
		// Rolling restarts: stop being ready, keep serving while the load
		// balancer notices, then answer 429 with Retry-After.
		"--shutdown-delay-duration=1s", "--shutdown-send-retry-after",
		// The election timed for a test: a dead leader is replaced
		// within 4 s rather than kube-controller-manager's 15 s.
		"--leader-elect-lease-duration=" + leaseDuration.String(), "--leader-elect-renew-deadline=3s", "--leader-elect-retry-period=500ms",
	}}
}

// admin is the admin's client config for host (host:port).
func (c *cluster) admin(host string) *rest.Config {
	return &rest.Config{Host: "https://" + host, QPS: -1, TLSClientConfig: rest.TLSClientConfig{
		CAFile: filepath.Join(c.pki, "ca.crt"), CertFile: filepath.Join(c.pki, "admin.crt"), KeyFile: filepath.Join(c.pki, "admin.key")}}
}

// replica is one capstan process.
type replica struct {
	name string
	addr string // 127.0.0.1:port
	dir  string
	cmd  *exec.Cmd
	done chan struct{}
}

// startReplica runs capstan (this binary, as TestMain lets it) with the
// cluster's flags and waits until it is ready.
func (c *cluster) startReplica(t *testing.T, r *replica) {
	_, port, _ := strings.Cut(r.addr, ":")
	r.run(t, append([]string{"--data-dir=" + r.dir, "--secure-port=" + port}, c.flags...))
	r.waitReady(t, kubernetes.NewForConfigOrDie(c.admin(r.addr)))
}

// run starts the process with args, its output in r.dir/capstan.log.
func (r *replica) run(t *testing.T, args []string) {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), replicaEnv+"=1")
	log, err := os.Create(filepath.Join(r.dir, "capstan.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.cmd, r.done = cmd, make(chan struct{})
	go func() {
		_ = cmd.Wait()
		log.Close()
		close(r.done)
	}()
	t.Cleanup(func() { r.kill() })
}

// waitReady polls /readyz through client for up to a minute.
func (r *replica) waitReady(t *testing.T, client kubernetes.Interface) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		select {
		case <-r.done:
			return false, fmt.Errorf("%s exited", r.name)
		default:
		}
		_, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("%s not ready: %v\n%s", r.name, err, r.logTail())
	}
}

// kill ends the process at once (SIGKILL), as a crash would.
func (r *replica) kill() {
	if r.cmd != nil && r.cmd.Process != nil {
		_ = r.cmd.Process.Signal(syscall.SIGKILL)
		<-r.done
	}
}

// stop ends the process gracefully (SIGTERM) and waits for it.
func (r *replica) stop(t *testing.T) {
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.done:
	case <-time.After(time.Minute):
		t.Fatalf("%s did not stop within a minute", r.name)
	}
}

func freePort(t *testing.T) int { return testkit.FreePort(t) }

// logTail is the end of the replica's log.
func (r *replica) logTail() string {
	out, _ := os.ReadFile(filepath.Join(r.dir, "capstan.log"))
	return string(out[max(0, len(out)-3000):])
}
