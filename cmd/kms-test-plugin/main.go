// Command kms-test-plugin serves internal/kmstest's KMS v2 plugin on a unix
// socket, for trying KMS encryption with capstan or kube-apiserver by hand.
// Its key is given in base64 so that two servers can share it.
package main

import (
	"encoding/base64"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/capstan-io/capstan/internal/kmstest"
)

func main() {
	socket := flag.String("socket", "/tmp/kms-test-plugin.sock", "unix socket to serve on")
	keyID := flag.String("key-id", "key1", "ID of the key")
	key := flag.String("key", "", "base64 AES key (16, 24 or 32 bytes); random if empty")
	flag.Parse()
	if err := run(*socket, *keyID, *key); err != nil {
		fmt.Fprintln(os.Stderr, "kms-test-plugin:", err)
		os.Exit(1)
	}
}

func run(socket, keyID, key string) error {
	p, err := kmstest.Start(socket, keyID)
	if err != nil {
		return err
	}
	defer p.Stop()
	if key != "" {
		raw, err := base64.StdEncoding.DecodeString(key)
		if err != nil {
			return fmt.Errorf("--key: %w", err)
		}
		if err := p.AddKey(keyID, raw, true); err != nil {
			return fmt.Errorf("--key: %w", err)
		}
	}
	fmt.Println("serving", p.Endpoint)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	return nil
}
