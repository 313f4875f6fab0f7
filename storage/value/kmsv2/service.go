// Package kmsv2 is KMS v2 envelope encryption as kube-apiserver does it:
// values are encrypted locally with a data encryption key (DEK) derived
// from a seed, the seed is encrypted by a KMS plugin reached over gRPC on a
// unix socket (k8s.io/kms/apis/v2), and each value is stored as an
// EncryptedObject carrying the encrypted seed, the plugin's key ID and
// annotations. A new seed is made when a provider starts and whenever the
// plugin's Status reports another key ID; reads decrypt a value's seed
// through the plugin once and keep the result.
package kmsv2

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	kmsapi "k8s.io/kms/apis/v2"
)

// Service is what the envelope needs from a KMS plugin.
type Service interface {
	Status(ctx context.Context) (*kmsapi.StatusResponse, error)
	Encrypt(ctx context.Context, uid string, plaintext []byte) (*kmsapi.EncryptResponse, error)
	Decrypt(ctx context.Context, uid string, req *kmsapi.DecryptRequest) ([]byte, error)
}

// grpcService calls a plugin, each call bounded by the configured timeout.
type grpcService struct {
	client  kmsapi.KeyManagementServiceClient
	timeout time.Duration
}

// Dial connects to the plugin at endpoint ("unix:///path", or
// "unix:///@name" for an abstract socket). The connection is closed when
// ctx is done. Calls wait for the plugin to be reachable, as kube's do.
func Dial(ctx context.Context, endpoint string, timeout time.Duration) (Service, error) {
	addr, err := socketPath(endpoint)
	if err != nil {
		return nil, err
	}
	conn, err := grpc.NewClient("passthrough:///"+addr,
		grpc.WithAuthority("localhost"),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.WaitForReady(true)),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", addr)
		}),
	)
	if err != nil {
		return nil, fmt.Errorf("failed to create connection to %s, error: %v", endpoint, err)
	}
	go func() {
		<-ctx.Done()
		_ = conn.Close()
	}()
	return &grpcService{client: kmsapi.NewKeyManagementServiceClient(conn), timeout: timeout}, nil
}

// socketPath is k8s.io/kms's reading of an endpoint.
func socketPath(endpoint string) (string, error) {
	if endpoint == "" {
		return "", fmt.Errorf("remote KMS provider can't use empty string as endpoint")
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", fmt.Errorf("invalid endpoint %q for remote KMS provider, error: %v", endpoint, err)
	}
	if u.Scheme != "unix" {
		return "", fmt.Errorf("unsupported scheme %q for remote KMS provider", u.Scheme)
	}
	if strings.HasPrefix(u.Path, "/@") {
		return strings.TrimPrefix(u.Path, "/"), nil
	}
	return u.Path, nil
}

func (s *grpcService) Status(ctx context.Context) (*kmsapi.StatusResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	return s.client.Status(ctx, &kmsapi.StatusRequest{})
}

func (s *grpcService) Encrypt(ctx context.Context, uid string, plaintext []byte) (*kmsapi.EncryptResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	return s.client.Encrypt(ctx, &kmsapi.EncryptRequest{Plaintext: plaintext, Uid: uid})
}

func (s *grpcService) Decrypt(ctx context.Context, uid string, req *kmsapi.DecryptRequest) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req.Uid = uid
	resp, err := s.client.Decrypt(ctx, req)
	if err != nil {
		return nil, err
	}
	return resp.Plaintext, nil
}
