package kubectl

import (
	"testing"

	"github.com/capstan-io/capstan/internal/testkit"
)

// TestImperativeWorkloadCommands: the imperative commands of issue 4's
// "done when", end to end.
func TestImperativeWorkloadCommands(t *testing.T) {
	s := testkit.StartServer(t)
	mustContain(t, run(t, s, "", "create", "deployment", "web", "--image=nginx:1.27", "--port=80"), "deployment.apps/web created")
	mustContain(t, run(t, s, "", "scale", "deployment/web", "--replicas=3"), "deployment.apps/web scaled")
	mustContain(t, run(t, s, "", "get", "deployment", "web", "-o", "jsonpath={.spec.replicas}"), "3")
	mustContain(t, run(t, s, "", "expose", "deployment", "web", "--port=80", "--target-port=80"), "service/web exposed")
	mustContain(t, run(t, s, "", "get", "service", "web", "-o", "jsonpath={.spec.selector.app}"), "web")
	mustContain(t, run(t, s, "", "create", "job", "once", "--image=busybox", "--", "true"), "job.batch/once created")
	mustContain(t, run(t, s, "", "create", "cronjob", "nightly", "--image=busybox", "--schedule=0 3 * * *", "--", "true"), "cronjob.batch/nightly created")
	mustContain(t, run(t, s, "", "get", "all", "-A"),
		"service/kubernetes", "service/web", "deployment.apps/web", "job.batch/once", "cronjob.batch/nightly")
}
