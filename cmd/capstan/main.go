// Command capstan runs the capstan API server.
package main

import (
	"os"

	"github.com/capstan-io/capstan/app"
)

func main() {
	if err := app.NewCommand(os.Stderr).Execute(); err != nil {
		os.Exit(1)
	}
}
