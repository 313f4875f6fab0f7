package app

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/spf13/cobra"
)

// NewEnvtestAssetsCommand is `capstan envtest-assets DIR`: it makes DIR a
// KUBEBUILDER_ASSETS directory for controller-runtime's envtest, with
// nothing downloaded: kube-apiserver and etcd are this binary (which runs
// as etcd when started under that name), kubectl a copy of a kubectl the
// user has.
func NewEnvtestAssetsCommand(out io.Writer) *cobra.Command {
	var kubectl string
	var copyBinary bool
	cmd := &cobra.Command{
		Use:   "envtest-assets DIR",
		Short: "Write a KUBEBUILDER_ASSETS directory for envtest: kube-apiserver and etcd are capstan, kubectl is copied",
		Long: "envtest-assets writes DIR/kube-apiserver and DIR/etcd as symbolic links to this capstan binary (copies with --copy)\n" +
			"and DIR/kubectl as a copy of --kubectl (default: kubectl on $PATH; without one DIR has no kubectl, which envtest needs\n" +
			"only for its Kubectl helper). Then: export KUBEBUILDER_ASSETS=DIR.",
		Args:         cobra.ExactArgs(1),
		SilenceUsage: true,
		RunE: func(_ *cobra.Command, args []string) error {
			return WriteEnvtestAssets(args[0], kubectl, copyBinary, out)
		},
	}
	cmd.Flags().StringVar(&kubectl, "kubectl", "", "The kubectl binary to copy into DIR (default: kubectl on $PATH).")
	cmd.Flags().BoolVar(&copyBinary, "copy", false, "Copy the capstan binary as kube-apiserver and etcd instead of linking to it.")
	return cmd
}

// WriteEnvtestAssets writes dir as NewEnvtestAssetsCommand says.
func WriteEnvtestAssets(dir, kubectl string, copyBinary bool, out io.Writer) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding the capstan binary: %w", err)
	}
	if self, err = filepath.EvalSymlinks(self); err != nil {
		return fmt.Errorf("finding the capstan binary: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, name := range []string{"kube-apiserver", "etcd"} {
		if err := placeBinary(self, filepath.Join(dir, name), copyBinary); err != nil {
			return err
		}
	}
	if kubectl == "" {
		if kubectl, err = exec.LookPath("kubectl"); err != nil {
			fmt.Fprintf(out, "no kubectl on $PATH: %s has kube-apiserver and etcd only (give one with --kubectl)\n", dir)
			return nil
		}
	}
	if err := placeBinary(kubectl, filepath.Join(dir, "kubectl"), true); err != nil {
		return fmt.Errorf("--kubectl: %w", err)
	}
	fmt.Fprintf(out, "export KUBEBUILDER_ASSETS=%s\n", dir)
	return nil
}

// placeBinary makes dst run src, by a symbolic link or a copy, replacing
// what dst was.
func placeBinary(src, dst string, copyBinary bool) error {
	if err := os.Remove(dst); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if !copyBinary {
		return os.Symlink(src, dst)
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, in); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o755); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}
