package app

import (
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// NewCommand is the capstan command.
func NewCommand(out io.Writer) *cobra.Command {
	o := NewOptions()
	cmd := &cobra.Command{
		Use:   "capstan",
		Short: "capstan is a Kubernetes-compatible API server",
		Long: "capstan serves the Kubernetes API: kubectl, client-go and controllers work against it unchanged.\n" +
			"Without --etcd-servers it runs an embedded etcd in --data-dir and writes an admin kubeconfig there.",
		SilenceUsage: true,
		Args:         cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return Run(ctx, o, out, func(c *Config) { printUsage(out, c) })
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

func newLogger(out io.Writer, verbosity int) *slog.Logger {
	level := slog.LevelInfo
	if verbosity > 0 {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: level}))
}
