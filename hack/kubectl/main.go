// Command kubectl is the upstream kubectl (k8s.io/kubectl at the version go.mod
// pins), built from this module so tests run the same client users run.
//
// It mirrors k8s.io/kubernetes/cmd/kubectl: the default kubectl command run
// through component-base's cli runner. Build it with the version stamped so
// that `kubectl version` reports the release instead of v0.0.0-master:
//
//	go build -o /tmp/kubectl -ldflags "\
//	  -X k8s.io/component-base/version.gitVersion=v1.37.2 \
//	  -X k8s.io/component-base/version.gitMajor=1 \
//	  -X k8s.io/component-base/version.gitMinor=37 \
//	  -X k8s.io/component-base/version.gitTreeState=clean" ./hack/kubectl
//
// internal/testkit builds it this way (see testkit.KubectlLDFlags).
package main

import (
	"os"

	// Registers the client-go auth plugins (exec, oidc) as kubectl does.
	_ "k8s.io/client-go/plugin/pkg/client/auth"
	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	// Set verbosity before the command is built, so that klog works while
	// kubectl constructs its commands and reads .kuberc, as upstream does.
	_, _ = logs.GlogSetter(cmd.GetLogVerbosity(os.Args))
	command := cmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		util.CheckErr(err)
	}
}
