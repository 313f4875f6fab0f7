package convert

import "encoding/json"

// resource.k8s.io/v1beta1 nests two things otherwise than v1 (and v1beta2):
// a request's fields for exactly one kind of device sit in the request
// itself, not under "exactly", and a slice's device keeps everything but
// its name under "basic". kube converts them the same way: a request moves
// its fields under "exactly" when any is set, and a device read at v1beta1
// always has a "basic", even an empty one.

// exactRequestFields are the fields of a v1beta1 request that v1 keeps
// under exactly.
var exactRequestFields = []string{"deviceClassName", "selectors", "allocationMode", "count",
	"adminAccess", "tolerations", "capacity", "derivedAttributes"}

// claimRequests returns the rewrite of every request of the claim spec at
// path.
func claimRequests(fn func(tree), path ...string) rewrite {
	return func(t tree) {
		eachObject(t, fn, append(append([]string{}, path...), "devices", "requests")...)
	}
}

// requestToV1 moves a v1beta1 request's fields under exactly, when any
// is set (an empty class name, written out by JSON, is not).
func requestToV1(req tree) {
	exactly := tree{}
	for _, k := range exactRequestFields {
		if v, ok := req[k]; ok {
			if v != nil && v != "" && v != json.Number("0") {
				exactly[k] = v
			}
			delete(req, k)
		}
	}
	if len(exactly) > 0 {
		req["exactly"] = exactly
	}
}

// requestToV1beta1 moves a v1 request's exactly fields into the request.
func requestToV1beta1(req tree) {
	exactly, _ := req["exactly"].(tree)
	delete(req, "exactly")
	for k, v := range exactly {
		req[k] = v
	}
}

// sliceDevices returns the rewrite of every device of a slice.
func sliceDevices(fn func(tree)) rewrite {
	return func(t tree) { eachObject(t, fn, "spec", "devices") }
}

// deviceToV1 lifts a v1beta1 device's basic fields into the device.
func deviceToV1(dev tree) {
	basic, _ := dev["basic"].(tree)
	delete(dev, "basic")
	for k, v := range basic {
		dev[k] = v
	}
}

// deviceToV1beta1 puts everything of a v1 device but its name under basic.
func deviceToV1beta1(dev tree) {
	basic := tree{}
	for k, v := range dev {
		if k != "name" {
			basic[k] = v
			delete(dev, k)
		}
	}
	dev["basic"] = basic
}
