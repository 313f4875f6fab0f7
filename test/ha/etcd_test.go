package ha

import (
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/capstan-io/capstan/internal/testpki"
)

// etcdCluster is a three-member etcd cluster in this process, serving
// clients and peers over mutual TLS.
type etcdCluster struct {
	members []*embed.Etcd
	configs []*embed.Config // each member's, to start it again
	killed  []bool
	// ClientURLs are the members' client URLs; CA, Cert and Key the
	// files of a client's certificate.
	ClientURLs    []string
	CA, Cert, Key string
}

// startEtcd starts the cluster with a PKI in dir.
func startEtcd(t *testing.T, dir string) *etcdCluster {
	ca := testpki.NewCA(t, dir, "etcd-ca")
	ca.Issue(t, dir, "etcd-server", testpki.Leaf{CN: "etcd", Server: true, Client: true})
	ca.Issue(t, dir, "client", testpki.Leaf{CN: "capstan", Client: true})
	c := &etcdCluster{CA: filepath.Join(dir, "etcd-ca.crt"), Cert: filepath.Join(dir, "client.crt"), Key: filepath.Join(dir, "client.key")}
	tls := transport.TLSInfo{CertFile: filepath.Join(dir, "etcd-server.crt"), KeyFile: filepath.Join(dir, "etcd-server.key"),
		TrustedCAFile: c.CA, ClientCertAuth: true}
	var peers, clients []url.URL
	var initial []string
	for i := range 3 {
		peers = append(peers, url.URL{Scheme: "https", Host: freeAddr(t)})
		clients = append(clients, url.URL{Scheme: "https", Host: freeAddr(t)})
		initial = append(initial, fmt.Sprintf("m%d=%s", i, peers[i].String()))
		c.ClientURLs = append(c.ClientURLs, clients[i].String())
	}
	c.configs = make([]*embed.Config, 3)
	for i := range 3 {
		cfg := embed.NewConfig()
		cfg.Name, cfg.Dir = fmt.Sprintf("m%d", i), filepath.Join(dir, fmt.Sprintf("m%d", i))
		cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peers[i]}, []url.URL{peers[i]}
		cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{clients[i]}, []url.URL{clients[i]}
		cfg.InitialCluster, cfg.InitialClusterToken = strings.Join(initial, ","), "ha-test"
		cfg.ClientTLSInfo, cfg.PeerTLSInfo = tls, tls
		cfg.ListenMetricsUrls = nil
		cfg.UnsafeNoFsync = true
		cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
		c.configs[i] = cfg
	}
	c.members, c.killed = make([]*embed.Etcd, 3), make([]bool, 3)
	c.start(t, 0, 1, 2)
	t.Cleanup(func() {
		for i, e := range c.members {
			if !c.killed[i] {
				e.Close()
			}
		}
	})
	return c
}

// start starts the members (for the first time, or again after a kill)
// and waits until each has joined the cluster: members of a new cluster
// start together, as none is ready before a majority runs.
func (c *etcdCluster) start(t *testing.T, members ...int) {
	errs := make(chan error, len(members))
	for _, i := range members {
		go func() {
			e, err := embed.StartEtcd(c.configs[i])
			c.members[i] = e
			errs <- err
		}()
	}
	for range members {
		if err := <-errs; err != nil {
			t.Fatalf("etcd: %v", err)
		}
	}
	for _, i := range members {
		c.killed[i] = false
		select {
		case <-c.members[i].Server.ReadyNotify():
		case <-time.After(time.Minute):
			t.Fatalf("etcd member m%d not ready within a minute", i)
		}
	}
}

// kill stops member i at once, without leaving the cluster.
func (c *etcdCluster) kill(i int) {
	c.killed[i] = true
	c.members[i].Server.HardStop()
	c.members[i].Close()
}

// freeAddr is a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
