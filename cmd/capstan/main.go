// Command capstan runs the capstan API server. Started under the name etcd
// (a link to it, as `capstan envtest-assets` writes), it runs an etcd
// server instead, as `capstan etcd` does.
package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/capstan-io/capstan/app"
	// Before the packages app brings: their init allocates.
	_ "github.com/capstan-io/capstan/internal/startgc/early"
)

func main() {
	if name := strings.TrimSuffix(filepath.Base(os.Args[0]), ".exe"); name == "etcd" {
		if err := app.RunEtcd(context.Background(), os.Args[1:], os.Stderr); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		return
	}
	cmd := app.NewCommand(os.Stderr)
	cmd.AddCommand(app.NewEtcdCommand(os.Stderr), app.NewEnvtestAssetsCommand(os.Stdout))
	if err := cmd.Execute(); err != nil {
		os.Exit(1)
	}
}
