// Package aggregator is the outermost server of the chain: clients reach
// every other server through it, and it serves the root discovery
// documents (/api, /apis) that list the groups of the whole chain. It will
// proxy APIServices to extension API servers.
package aggregator

import (
	"github.com/capstan-io/capstan/server"
)

// Config is the aggregator's configuration.
type Config struct {
	Generic server.CompletedConfig
}

// Server is the aggregator.
type Server struct {
	Server *server.Server
}

// New builds the aggregator in front of delegate.
func (c Config) New(delegate *server.Server) (*Server, error) {
	s, err := c.Generic.New("kube-aggregator", delegate)
	if err != nil {
		return nil, err
	}
	return &Server{Server: s}, nil
}
