package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"sort"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"go.etcd.io/etcd/api/v3/version"
	"go.etcd.io/etcd/pkg/v3/flags"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// NewEtcdCommand is `capstan etcd`: an etcd server, the one capstan embeds,
// taking etcd's own flags, so that the capstan binary can stand in for
// etcd where a tool starts one (envtest's KUBEBUILDER_ASSETS/etcd). The
// binary runs it too when started under the name etcd.
func NewEtcdCommand(out io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "etcd [etcd flags]",
		Short: "Run an etcd server (etcd " + version.Version + ", with etcd's flags)",
		// etcd's flags are Go flags, parsed by etcd's rules below.
		DisableFlagParsing: true,
		SilenceUsage:       true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return RunEtcd(cmd.Context(), args, out)
		},
	}
}

// RunEtcd runs an etcd server with etcd's command-line args until SIGINT or
// SIGTERM, or until ctx is done.
func RunEtcd(ctx context.Context, args []string, out io.Writer) error {
	cfg, err := parseEtcdFlags(args, out)
	if errors.Is(err, flag.ErrHelp) || errors.Is(err, errVersion) {
		return nil
	}
	if err != nil {
		return err
	}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	defer e.Close()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		return fmt.Errorf("etcd: %w", err)
	case <-ctx.Done():
		return nil
	}
	select {
	case err := <-e.Err():
		return fmt.Errorf("etcd: %w", err)
	case <-ctx.Done():
		return nil
	}
}

var errVersion = errors.New("version printed")

// parseEtcdFlags reads etcd's flags (and ETCD_* variables) into an embed
// Config as the etcd command does: the flags embed registers, the lists it
// leaves to its command read from them, and --initial-cluster-state.
func parseEtcdFlags(args []string, out io.Writer) (*embed.Config, error) {
	cfg := embed.NewConfig()
	fs := flag.NewFlagSet("etcd", flag.ContinueOnError)
	fs.SetOutput(out)
	cfg.AddFlags(fs)
	clusterState := flags.NewSelectiveStringValue(embed.ClusterStateFlagNew, embed.ClusterStateFlagExisting)
	fs.Var(clusterState, "initial-cluster-state", "Initial cluster state ('new' or 'existing').")
	printVersion := fs.Bool("version", false, "Print the version and exit.")
	fs.Usage = func() { etcdUsage(out, fs) }
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("etcd: %q is not a flag", fs.Arg(0))
	}
	if *printVersion {
		fmt.Fprintf(out, "etcd Version: %s\nGo Version: %s\nGo OS/Arch: %s/%s\n", version.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return nil, errVersion
	}
	if err := flags.SetFlagsFromEnv(zap.NewNop(), "ETCD", fs); err != nil {
		return nil, err
	}
	cfg.ListenPeerUrls = flags.UniqueURLsFromFlag(fs, "listen-peer-urls")
	cfg.AdvertisePeerUrls = flags.UniqueURLsFromFlag(fs, "initial-advertise-peer-urls")
	cfg.ListenClientUrls = flags.UniqueURLsFromFlag(fs, "listen-client-urls")
	cfg.ListenClientHttpUrls = flags.UniqueURLsFromFlag(fs, "listen-client-http-urls")
	cfg.AdvertiseClientUrls = flags.UniqueURLsFromFlag(fs, "advertise-client-urls")
	cfg.ListenMetricsUrls = flags.UniqueURLsFromFlag(fs, "listen-metrics-urls")
	cfg.DiscoveryCfg.Endpoints = flags.UniqueStringsFromFlag(fs, "discovery-endpoints")
	cfg.CORS = flags.UniqueURLsMapFromFlag(fs, "cors")
	cfg.HostWhitelist = flags.UniqueStringsMapFromFlag(fs, "host-whitelist")
	cfg.ClientTLSInfo.AllowedHostnames = flags.StringsFromFlag(fs, "client-cert-allowed-hostname")
	cfg.PeerTLSInfo.AllowedCNs = flags.StringsFromFlag(fs, "peer-cert-allowed-cn")
	cfg.PeerTLSInfo.AllowedHostnames = flags.StringsFromFlag(fs, "peer-cert-allowed-hostname")
	cfg.CipherSuites = flags.StringsFromFlag(fs, "cipher-suites")
	cfg.MaxConcurrentStreams = flags.Uint32FromFlag(fs, "max-concurrent-streams")
	cfg.LogOutputs = flags.UniqueStringsFromFlag(fs, "log-outputs")
	cfg.ClusterState = clusterState.String()
	// As etcd: client URLs to listen on without ones to advertise advertise none.
	if flags.IsSet(fs, "listen-client-urls") && !flags.IsSet(fs, "advertise-client-urls") {
		cfg.AdvertiseClientUrls = nil
	}
	fs.Visit(func(f *flag.Flag) { cfg.FlagsExplicitlySet[f.Name] = true })
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("etcd: %w", err)
	}
	return cfg, nil
}

// etcdUsage lists the flags as etcd's help does, with two dashes: tools
// look for a flag in it (envtest for --unsafe-no-fsync).
func etcdUsage(out io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(out, "Usage: etcd [flags]\n\nAn etcd %s server, embedded in capstan.\n\nFlags:\n", version.Version)
	var lines []string
	fs.VisitAll(func(f *flag.Flag) {
		def := ""
		if f.DefValue != "" {
			def = " (default " + f.DefValue + ")"
		}
		lines = append(lines, fmt.Sprintf("  --%s\n      %s%s\n", f.Name, strings.ReplaceAll(f.Usage, "\n", " "), def))
	})
	sort.Strings(lines)
	fmt.Fprint(out, strings.Join(lines, ""))
}
