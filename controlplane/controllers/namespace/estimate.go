package namespace

import "time"

// graceLeft returns grace seconds, or zero once elapsed has reached them:
// kube's estimate is all or nothing, the pods had their whole grace period.
func graceLeft(grace int64, elapsed time.Duration) int64 {
	if elapsed >= time.Duration(grace)*time.Second {
		return 0
	}
	return grace
}
