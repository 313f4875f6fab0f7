// Command etcd is the etcd server (go.etcd.io/etcd/server/v3 v3.7.3), built
// from the same module graph as kube-apiserver. It mirrors etcd's server/main.go.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
