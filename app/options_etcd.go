package app

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/storage/storagefactory"
)

// EtcdOptions are kube's "etcd" section: where objects are stored, how,
// and what is cached in front of the store.
type EtcdOptions struct {
	// Servers is --etcd-servers; empty runs the embedded etcd.
	Servers []string
	// ServersOverrides is --etcd-servers-overrides: group/resource#servers.
	ServersOverrides []string
	Prefix           string
	// TLS are --etcd-cafile, --etcd-certfile and --etcd-keyfile.
	TLS EtcdTLSOptions

	CompactionInterval    time.Duration
	CountMetricPollPeriod time.Duration
	DBMetricPollInterval  time.Duration
	HealthcheckTimeout    time.Duration
	ReadycheckTimeout     time.Duration
	LeaseReuseSeconds     int64

	StorageBackend          string
	StorageMediaType        string
	DeleteCollectionWorkers int
	EnableGarbageCollector  bool

	WatchCache      bool
	WatchCacheSizes []string

	Encryption EncryptionOptions

	// workersSet tells whether --delete-collection-workers was given.
	workersSet func() bool
}

// EtcdTLSOptions are the client certificate and CA of a TLS etcd.
type EtcdTLSOptions struct {
	CAFile, CertFile, KeyFile string
}

// storageMediaProtobuf is kube-apiserver's default storage encoding.
const storageMediaProtobuf = "application/vnd.kubernetes.protobuf"

// NewEtcdOptions returns kube-apiserver's defaults.
func NewEtcdOptions() EtcdOptions {
	return EtcdOptions{
		Prefix: "/registry", CompactionInterval: 5 * time.Minute, CountMetricPollPeriod: time.Minute,
		DBMetricPollInterval: 30 * time.Second, HealthcheckTimeout: 2 * time.Second, ReadycheckTimeout: 2 * time.Second,
		LeaseReuseSeconds: 60, StorageMediaType: storageMediaProtobuf, DeleteCollectionWorkers: 1,
		EnableGarbageCollector: true, WatchCache: true, Encryption: NewEncryptionOptions(),
	}
}

// AddFlags registers the section's flags.
func (o *EtcdOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&o.ServersOverrides, "etcd-servers-overrides", o.ServersOverrides, "Per-resource etcd servers, comma separated. "+
		"One override is group/resource#servers, servers being URLs separated by semicolons; the core group is empty: '/events#http://127.0.0.1:4002'.")
	fs.StringVar(&o.StorageMediaType, "storage-media-type", o.StorageMediaType, "The media type objects are stored in etcd with; "+
		"some resources or storage backends may support only one. Supported: application/json, application/yaml, application/vnd.kubernetes.protobuf.")
	fs.IntVar(&o.DeleteCollectionWorkers, "delete-collection-workers", o.DeleteCollectionWorkers, "How many objects a DeleteCollection call deletes in parallel. "+
		"Without the flag capstan deletes 8 at a time.")
	o.workersSet = func() bool { return fs.Changed("delete-collection-workers") }
	fs.BoolVar(&o.EnableGarbageCollector, "enable-garbage-collector", o.EnableGarbageCollector, "Enables the generic garbage collector. "+
		"MUST agree with the flag of the same name of a kube-controller-manager run beside capstan.")
	fs.BoolVar(&o.WatchCache, "watch-cache", o.WatchCache, "Serve lists and watches from a cache in front of etcd.")
	fs.StringSliceVar(&o.WatchCacheSizes, "watch-cache-sizes", o.WatchCacheSizes, "Watch cache settings per built-in resource, comma separated, each resource[.group]#size "+
		"(resource lowercase plural, group omitted for core/v1). Only zero means something: it turns the resource's watch cache off; "+
		"every other size keeps it on.")
	fs.StringVar(&o.StorageBackend, "storage-backend", o.StorageBackend, "The storage backend for persistence. Options: 'etcd3' (default).")
	fs.StringSliceVar(&o.Servers, "etcd-servers", o.Servers, "List of etcd servers to connect with (scheme://ip:port), comma separated. "+
		"Without it capstan runs an embedded etcd in --data-dir.")
	fs.StringVar(&o.Prefix, "etcd-prefix", o.Prefix, "The prefix to prepend to all resource paths in etcd.")
	fs.StringVar(&o.TLS.KeyFile, "etcd-keyfile", o.TLS.KeyFile, "SSL key file used to secure etcd communication.")
	fs.StringVar(&o.TLS.CertFile, "etcd-certfile", o.TLS.CertFile, "SSL certification file used to secure etcd communication.")
	fs.StringVar(&o.TLS.CAFile, "etcd-cafile", o.TLS.CAFile, "SSL Certificate Authority file used to secure etcd communication.")
	o.Encryption.AddFlags(fs)
	fs.DurationVar(&o.CompactionInterval, "etcd-compaction-interval", o.CompactionInterval, "The interval of compaction requests. If 0, the compaction request from apiserver is disabled.")
	fs.DurationVar(&o.CountMetricPollPeriod, "etcd-count-metric-poll-period", o.CountMetricPollPeriod, "How often the number of objects of each resource is read from etcd "+
		"(for priority and fairness' estimates of lists). 0 never.")
	fs.DurationVar(&o.DBMetricPollInterval, "etcd-db-metric-poll-interval", o.DBMetricPollInterval, "The interval of requests to poll etcd and update metric. 0 disables the metric collection")
	fs.DurationVar(&o.HealthcheckTimeout, "etcd-healthcheck-timeout", o.HealthcheckTimeout, "The timeout to use when checking etcd health.")
	fs.DurationVar(&o.ReadycheckTimeout, "etcd-readycheck-timeout", o.ReadycheckTimeout, "The timeout to use when checking etcd readiness")
	fs.Int64Var(&o.LeaseReuseSeconds, "lease-reuse-duration-seconds", o.LeaseReuseSeconds, "The time in seconds that each lease is reused. "+
		"A lower value could avoid large number of objects reusing the same lease. Notice that a too small value may cause performance problems at storage layer.")
}

// Validate reports kube's errors for the section, and capstan's for what
// it does not implement.
func (o *EtcdOptions) Validate() error {
	var errs []error
	if o.StorageBackend != "" && o.StorageBackend != "etcd3" {
		errs = append(errs, errors.New("--storage-backend invalid, allowed values: etcd3. If not specified, it will default to 'etcd3'"))
	}
	if _, err := parseServersOverrides(o.ServersOverrides); err != nil {
		errs = append(errs, err)
	}
	switch o.StorageMediaType {
	case storageMediaProtobuf:
	case "application/json", "application/yaml":
		errs = append(errs, fmt.Errorf("--storage-media-type=%s: capstan stores built-in objects as kube does by default, %s", o.StorageMediaType, storageMediaProtobuf))
	default:
		errs = append(errs, fmt.Errorf("--storage-media-type %q invalid, allowed values: application/json, application/vnd.kubernetes.protobuf, application/yaml", o.StorageMediaType))
	}
	if _, err := parseWatchCacheSizes(o.WatchCacheSizes); err != nil {
		errs = append(errs, err)
	}
	if o.DeleteCollectionWorkers < 1 {
		errs = append(errs, fmt.Errorf("--delete-collection-workers must be positive, got %d", o.DeleteCollectionWorkers))
	}
	if o.DBMetricPollInterval != 30*time.Second && o.DBMetricPollInterval != 0 {
		errs = append(errs, errors.New("--etcd-db-metric-poll-interval: capstan has no etcd database size metric yet (apiserver_storage_size_bytes); leave it at 30s or 0"))
	}
	if o.LeaseReuseSeconds <= 0 {
		errs = append(errs, fmt.Errorf("--lease-reuse-duration-seconds must be positive, got %d", o.LeaseReuseSeconds))
	}
	if (o.TLS.CertFile == "") != (o.TLS.KeyFile == "") {
		errs = append(errs, errors.New("--etcd-certfile and --etcd-keyfile must be given together"))
	}
	if len(o.Servers) == 0 && (o.TLS != EtcdTLSOptions{} || len(o.ServersOverrides) > 0) {
		errs = append(errs, errors.New("--etcd-cafile, --etcd-certfile, --etcd-keyfile and --etcd-servers-overrides need --etcd-servers: the embedded etcd is reached in-process"))
	}
	if o.Prefix == "" || o.Prefix[0] != '/' {
		errs = append(errs, fmt.Errorf("--etcd-prefix %q must start with /", o.Prefix))
	}
	errs = append(errs, o.Encryption.Validate())
	return errors.Join(errs...)
}

// serversOverride is one --etcd-servers-overrides entry.
type serversOverride struct {
	Resource schema.GroupResource
	Servers  []string
}

func parseServersOverrides(list []string) ([]serversOverride, error) {
	invalid := errors.New("--etcd-servers-overrides invalid, must be of format: group/resource#servers, where servers are URLs, semicolon separated")
	var out []serversOverride
	for _, o := range list {
		gr, servers, ok := strings.Cut(o, "#")
		group, resource, ok2 := strings.Cut(gr, "/")
		if !ok || !ok2 || strings.Contains(servers, "#") || strings.Contains(resource, "/") {
			return nil, invalid
		}
		urls := strings.Split(servers, ";")
		for _, u := range urls {
			if u == "" {
				return nil, invalid
			}
		}
		out = append(out, serversOverride{Resource: schema.GroupResource{Group: group, Resource: resource}, Servers: urls})
	}
	return out, nil
}

// parseWatchCacheSizes reads resource[.group]#size entries into the
// resources whose cache is on (true) or off (false, size 0).
func parseWatchCacheSizes(list []string) (map[schema.GroupResource]bool, error) {
	out := map[schema.GroupResource]bool{}
	for _, e := range list {
		name, size, ok := strings.Cut(e, "#")
		if !ok {
			return nil, fmt.Errorf("invalid value of watch cache size: %s", e)
		}
		n, err := strconv.Atoi(size)
		if err != nil {
			return nil, fmt.Errorf("invalid size of watch cache size: %s", e)
		}
		if n < 0 {
			return nil, fmt.Errorf("watch cache size cannot be negative: %s", e)
		}
		out[schema.ParseGroupResource(name)] = n > 0
	}
	return out, nil
}

// deletion is how the stores delete: the flag's number of workers when it
// is given, capstan's default otherwise; no garbage collection finalizers
// with --enable-garbage-collector=false.
func (o *EtcdOptions) deletion() storagefactory.Deletion {
	d := storagefactory.Deletion{NoGarbageCollector: !o.EnableGarbageCollector}
	if o.workersSet != nil && o.workersSet() {
		d.CollectionWorkers = o.DeleteCollectionWorkers
	}
	return d
}

// cachesOff are the resources --watch-cache-sizes gives size 0.
func (o *EtcdOptions) cachesOff() (map[schema.GroupResource]bool, error) {
	sizes, err := parseWatchCacheSizes(o.WatchCacheSizes)
	if err != nil {
		return nil, err
	}
	off := map[schema.GroupResource]bool{}
	for gr, on := range sizes {
		if !on {
			off[gr] = true
		}
	}
	return off, nil
}
