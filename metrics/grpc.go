package metrics

import (
	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"google.golang.org/grpc"
)

// grpcClient counts the etcd client's gRPC calls and messages: kube's
// grpc_client_ families (started, handled by code, messages sent and
// received), the same names and labels as go-grpc-prometheus, whose
// successor this is.
var grpcClient = grpcprom.NewClientMetrics()

func init() { register(grpcClient) }

// GRPCClientDialOptions are the gRPC options that count a client's calls
// in the grpc_client_ families: the etcd clients'.
func GRPCClientDialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithChainUnaryInterceptor(grpcClient.UnaryClientInterceptor()),
		grpc.WithChainStreamInterceptor(grpcClient.StreamClientInterceptor()),
	}
}
