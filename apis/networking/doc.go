// Package networking holds the strategies of the networking.k8s.io/v1
// resources capstan serves: service CIDRs (with their status) and the IP
// addresses the cluster IP allocator records in them.
package networking
