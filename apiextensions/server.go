// Package apiextensions is the CRD server: the innermost server of the
// chain, which will serve CustomResourceDefinitions and the custom
// resources they define. Today it serves no group yet; requests pass
// through it to the NotFound handler.
package apiextensions

import (
	"github.com/capstan-io/capstan/server"
)

// Config is the CRD server's configuration.
type Config struct {
	Generic server.CompletedConfig
}

// Server is the CRD server.
type Server struct {
	Server *server.Server
}

// New builds the CRD server in front of delegate.
func (c Config) New(delegate *server.Server) (*Server, error) {
	s, err := c.Generic.New("apiextensions-apiserver", delegate)
	if err != nil {
		return nil, err
	}
	return &Server{Server: s}, nil
}
