// Package batch holds the strategies of the batch/v1 resources: jobs and
// cron jobs. Defaults follow kube's batch/v1 scheme defaulting; the
// validation functions reproduce the field paths and messages of
// kube-apiserver for everything but metadata, which the generic Store
// validates. Pod templates are defaulted and validated by the core package.
//
// The package embeds the IANA time zone database, as kube-apiserver does, so
// that spec.timeZone of a cron job validates the same on every host.
package batch

import _ "time/tzdata" // cron job time zones
