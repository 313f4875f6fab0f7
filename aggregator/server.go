// Package aggregator is the outermost server of the chain: clients reach
// every other server through it, and it serves the root discovery
// documents (/api, /apis) that list the groups of the whole chain. It
// serves apiregistration.k8s.io/v1 APIServices and keeps a Local one for
// every group version the chain serves (autoregister.go).
package aggregator

import (
	"log/slog"

	"github.com/capstan-io/capstan/server"
	"github.com/capstan-io/capstan/storage/storagefactory"
)

// Config is the aggregator's configuration.
type Config struct {
	Generic server.CompletedConfig
	// Storage makes the storage of APIServices.
	Storage *storagefactory.Factory
	Logger  *slog.Logger
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
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	// What the delegates serve before any CRD is read: the group versions
	// of the APIServices kept from the start.
	builtIn := localGroupVersions(s.Discovery())
	store, err := c.apiServiceStore()
	if err != nil {
		return nil, err
	}
	if err := s.InstallAPIGroup(apiRegistrationGroup(store)); err != nil {
		return nil, err
	}
	c.startAutoregistration(s, builtIn)
	return &Server{Server: s}, nil
}
