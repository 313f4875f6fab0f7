// Package crd tests CustomResourceDefinitions end to end: schemas,
// validation rules, versions and conversion webhooks, protobuf, the watch
// cache and kube's stored objects.
package crd

import (
	"os"
	"testing"

	"github.com/capstan-io/capstan/internal/testkit"
)

func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) }
