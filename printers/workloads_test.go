package printers

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var (
	appSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"},
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"web"}}}}
	twoContainers = corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		Containers:   []corev1.Container{{Name: "a", Image: "ia"}, {Name: "b", Image: "ib"}},
		NodeSelector: map[string]string{"disk": "ssd"},
	}}
)

func TestAppsRows(t *testing.T) {
	runRows(t, []rowCase{
		{"deployment", printed(deploymentRow, &appsv1.Deployment{ObjectMeta: created("d"),
			Spec:   appsv1.DeploymentSpec{Replicas: ptr(int32(3)), Selector: appSelector, Template: twoContainers},
			Status: appsv1.DeploymentStatus{ReadyReplicas: 2, UpdatedReplicas: 1, AvailableReplicas: 2},
		}), []any{"d", "2/3", int64(1), int64(2), "60m", "a,b", "ia,ib", "app=x,tier in (web)"}},
		{"deployment without selector", printed(deploymentRow, &appsv1.Deployment{ObjectMeta: created("d")}),
			[]any{"d", "0/0", int64(0), int64(0), "60m", "", "", ""}},
		{"deployment with a bad selector", printed(deploymentRow, &appsv1.Deployment{ObjectMeta: created("d"),
			Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Bad"}}}}}),
			[]any{"d", "0/0", int64(0), int64(0), "60m", "", "", "<invalid>"}},
		{"replicaset", printed(replicaSetRow, &appsv1.ReplicaSet{ObjectMeta: created("rs"),
			Spec:   appsv1.ReplicaSetSpec{Replicas: ptr(int32(3)), Selector: appSelector, Template: twoContainers},
			Status: appsv1.ReplicaSetStatus{Replicas: 3, ReadyReplicas: 1},
		}), []any{"rs", int64(3), int64(3), int64(1), "60m", "a,b", "ia,ib", "app=x,tier in (web)"}},
		{"replicaset without selector", printed(replicaSetRow, &appsv1.ReplicaSet{ObjectMeta: created("rs")}),
			[]any{"rs", int64(0), int64(0), int64(0), "60m", "", "", "<none>"}},
		{"statefulset", printed(statefulSetRow, &appsv1.StatefulSet{ObjectMeta: created("ss"),
			Spec: appsv1.StatefulSetSpec{Replicas: ptr(int32(2)), Template: twoContainers}, Status: appsv1.StatefulSetStatus{ReadyReplicas: 1},
		}), []any{"ss", "1/2", "60m", "a,b", "ia,ib"}},
		{"daemonset", printed(daemonSetRow, &appsv1.DaemonSet{ObjectMeta: created("ds"),
			Spec: appsv1.DaemonSetSpec{Selector: appSelector, Template: twoContainers},
			Status: appsv1.DaemonSetStatus{DesiredNumberScheduled: 5, CurrentNumberScheduled: 4, NumberReady: 3,
				UpdatedNumberScheduled: 2, NumberAvailable: 1},
		}), []any{"ds", int64(5), int64(4), int64(3), int64(2), int64(1), "disk=ssd", "60m", "a,b", "ia,ib", "app=x,tier in (web)"}},
	})
}

func TestControllerRevisionRows(t *testing.T) {
	owned := func(apiVersion, kind string) *appsv1.ControllerRevision {
		cr := &appsv1.ControllerRevision{ObjectMeta: created("cr"), Revision: 4}
		cr.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "other"},
			{APIVersion: apiVersion, Kind: kind, Name: "web", Controller: ptr(true)}}
		return cr
	}
	runRows(t, []rowCase{
		{"statefulset", printed(controllerRevisionRow, owned("apps/v1", "StatefulSet")), []any{"cr", "statefulset.apps/web", int64(4), "60m"}},
		{"core kind", printed(controllerRevisionRow, owned("v1", "Pod")), []any{"cr", "pod/web", int64(4), "60m"}},
		{"no kind", printed(controllerRevisionRow, owned("v1", "")), []any{"cr", "web", int64(4), "60m"}},
		{"no controller", printed(controllerRevisionRow, &appsv1.ControllerRevision{ObjectMeta: created("cr")}), []any{"cr", "<none>", int64(0), "60m"}},
	})
	if _, err := controllerRevisionRow(owned("a/b/c", "X"), now); err == nil {
		t.Error("a controller with a bad apiVersion printed without an error")
	}
}

func TestBatchRows(t *testing.T) {
	job := func(edit func(j *batchv1.Job)) *batchv1.Job {
		j := &batchv1.Job{ObjectMeta: created("j"), Spec: batchv1.JobSpec{Selector: appSelector, Template: twoContainers}}
		edit(j)
		return j
	}
	cond := func(typ batchv1.JobConditionType, status corev1.ConditionStatus) batchv1.JobCondition {
		return batchv1.JobCondition{Type: typ, Status: status}
	}
	tail := []any{"60m", "a,b", "ia,ib", "app=x,tier in (web)"}
	jobCells := func(status, completions, took string) []any {
		return append([]any{"j", status, completions, took}, tail...)
	}
	runRows(t, []rowCase{
		{"running", printed(jobRow, job(func(j *batchv1.Job) {
			j.Spec.Completions, j.Status.Succeeded = ptr(int32(5)), 2
			j.Status.StartTime = ptr(ago(3 * time.Minute))
		})), jobCells("Running", "2/5", "3m")},
		{"complete", printed(jobRow, job(func(j *batchv1.Job) {
			j.Status.Succeeded = 1
			j.Status.StartTime, j.Status.CompletionTime = ptr(ago(time.Hour)), ptr(ago(50*time.Minute))
			j.Status.Conditions = []batchv1.JobCondition{cond(batchv1.JobSuccessCriteriaMet, corev1.ConditionTrue), cond(batchv1.JobComplete, corev1.ConditionTrue)}
		})), jobCells("Complete", "1/1", "10m")},
		{"parallel", printed(jobRow, job(func(j *batchv1.Job) { j.Spec.Parallelism = ptr(int32(3)) })), jobCells("Running", "0/1 of 3", "")},
		{"failed", printed(jobRow, job(func(j *batchv1.Job) {
			j.DeletionTimestamp = ptr(ago(time.Second))
			j.Status.Conditions = []batchv1.JobCondition{cond(batchv1.JobFailed, corev1.ConditionTrue)}
		})), jobCells("Failed", "0/1", "")},
		{"terminating", printed(jobRow, job(func(j *batchv1.Job) {
			j.DeletionTimestamp = ptr(ago(time.Second))
			j.Status.Conditions = []batchv1.JobCondition{cond(batchv1.JobSuspended, corev1.ConditionTrue)}
		})), jobCells("Terminating", "0/1", "")},
		{"suspended", printed(jobRow, job(func(j *batchv1.Job) {
			j.Status.Conditions = []batchv1.JobCondition{cond(batchv1.JobComplete, corev1.ConditionFalse), cond(batchv1.JobSuspended, corev1.ConditionTrue)}
		})), jobCells("Suspended", "0/1", "")},
		{"failure target", printed(jobRow, job(func(j *batchv1.Job) {
			j.Status.Conditions = []batchv1.JobCondition{cond(batchv1.JobFailureTarget, corev1.ConditionTrue)}
		})), jobCells("FailureTarget", "0/1", "")},
		{"success criteria met", printed(jobRow, job(func(j *batchv1.Job) {
			j.Status.Conditions = []batchv1.JobCondition{cond(batchv1.JobSuccessCriteriaMet, corev1.ConditionTrue)}
		})), jobCells("SuccessCriteriaMet", "0/1", "")},
		{"cronjob", printed(cronJobRow, &batchv1.CronJob{ObjectMeta: created("cj"), Spec: batchv1.CronJobSpec{
			Schedule: "*/5 * * * *", TimeZone: ptr("Europe/Paris"), Suspend: ptr(false),
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Selector: appSelector, Template: twoContainers}},
		}, Status: batchv1.CronJobStatus{Active: make([]corev1.ObjectReference, 2), LastScheduleTime: ptr(ago(4 * time.Minute))}}),
			[]any{"cj", "*/5 * * * *", "Europe/Paris", "False", int64(2), "4m", "60m", "a,b", "ia,ib", "app=x,tier in (web)"}},
		{"cronjob unset", printed(cronJobRow, &batchv1.CronJob{ObjectMeta: created("cj"), Spec: batchv1.CronJobSpec{Suspend: ptr(true)}}),
			[]any{"cj", "", "<none>", "True", int64(0), "<none>", "60m", "", "", "<none>"}},
		{"cronjob suspend unset", printed(cronJobRow, &batchv1.CronJob{ObjectMeta: created("cj")}),
			[]any{"cj", "", "<none>", "<unset>", int64(0), "<none>", "60m", "", "", "<none>"}},
	})
}
