// Command capstan runs the capstan API server.
package main

import (
	"os"

	"github.com/capstan-io/capstan/app"
	// Before the packages app brings: their init allocates.
	_ "github.com/capstan-io/capstan/internal/startgc/early"
)

func main() {
	if err := app.NewCommand(os.Stderr).Execute(); err != nil {
		os.Exit(1)
	}
}
