package controlplane

import "github.com/capstan-io/capstan/controlplane/controllers/storageversionmigrator"

// The control loops capstan runs in-process that kube leaves to
// kube-controller-manager, named as kube-controller-manager names them so
// that --controllers reads the same on both.
const (
	NamespaceController              = "namespace-controller"
	GarbageCollectorController       = "garbage-collector-controller"
	ClusterRoleAggregationController = "clusterrole-aggregation-controller"
	ServiceAccountController         = "serviceaccount-controller"
	RootCACertPublisherController    = "root-ca-certificate-publisher-controller"
	ResourceQuotaController          = "resourcequota-controller"
	PVCProtectionController          = "persistentvolumeclaim-protection-controller"
	PVProtectionController           = "persistentvolume-protection-controller"
	VACProtectionController          = "volumeattributesclass-protection-controller"
	VAPStatusController              = "validatingadmissionpolicy-status-controller"
	ServiceAccountTokenController    = "serviceaccount-token-controller"
	StorageVersionMigratorController = storageversionmigrator.Name
)

// InProcessControllers are the loops above, each with the aliases
// kube-controller-manager accepts for it.
var InProcessControllers = map[string][]string{
	NamespaceController:              {"namespace"},
	GarbageCollectorController:       {"garbagecollector"},
	ClusterRoleAggregationController: {"clusterrole-aggregation"},
	ServiceAccountController:         {"serviceaccount"},
	RootCACertPublisherController:    {"root-ca-cert-publisher"},
	ResourceQuotaController:          {"resourcequota"},
	PVCProtectionController:          {"pvc-protection"},
	PVProtectionController:           {"pv-protection"},
	VACProtectionController:          {},
	ServiceAccountTokenController:    {"serviceaccount-token"},
	VAPStatusController:              {},
	StorageVersionMigratorController: {"svm"},
}

// DisabledControllers names the in-process loops not to run (by their
// canonical names above); the zero value runs them all.
type DisabledControllers map[string]bool

// Runs reports whether the loop named name runs.
func (d DisabledControllers) Runs(name string) bool { return !d[name] }
