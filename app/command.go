package app

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/component-base/term"
)

// NewCommand is the capstan command. Its flags and help sections are
// kube-apiserver's, capstan's own last.
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
			if done, err := printVersion(out, o.Global.Version); done || err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return Run(ctx, o, out, func(p *Process) { printUsage(out, p) })
		},
	}
	fss := o.Flags()
	fs := cmd.Flags()
	for _, name := range fss.Order {
		fs.AddFlagSet(fss.FlagSets[name])
	}
	cols, _, _ := term.TerminalSize(cmd.OutOrStdout())
	cliflag.SetUsageAndHelpFunc(cmd, fss, cols)
	return cmd
}

// printVersion prints what --version asks for, as kube-apiserver does:
// "Kubernetes v1.37.2" (and capstan's build on a second line), or the
// whole version as Go source with raw. done is false without --version.
func printVersion(out io.Writer, v versionFlag) (done bool, err error) {
	info := versionInfo(v)
	switch v {
	case "true":
		_, err = fmt.Fprintf(out, "Kubernetes %s\ncapstan %s\n", info.GitVersion, capstanBuild())
		return true, err
	case "raw":
		b, err := json.MarshalIndent(info, "", "  ")
		if err != nil {
			return true, err
		}
		_, err = fmt.Fprintf(out, "%s\n", b)
		return true, err
	}
	return false, nil
}
