package app

import (
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/spf13/pflag"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	netutils "k8s.io/utils/net"

	"github.com/capstan-io/capstan/controlplane"
)

// ServiceOptions are the flags of service cluster IPs and node ports, with
// kube-apiserver's names and formats.
type ServiceOptions struct {
	// ClusterIPRanges is --service-cluster-ip-range: "cidr" or "cidr,cidr".
	ClusterIPRanges string
	// NodePortRange is --service-node-port-range: "30000-32767".
	NodePortRange utilnet.PortRange
}

// NewServiceOptions returns the defaults: 10.0.0.0/24 (kube's default when
// the flag is not given) and 30000-32767.
func NewServiceOptions() ServiceOptions {
	pr, _ := utilnet.ParsePortRange(controlplane.DefaultServiceNodePortRange)
	return ServiceOptions{NodePortRange: *pr}
}

// AddFlags registers the flags.
func (o *ServiceOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ClusterIPRanges, "service-cluster-ip-range", o.ClusterIPRanges, ""+
		"A CIDR notation IP range from which to assign service cluster IPs. This must not "+
		"overlap with any IP ranges assigned to nodes or pods. Max of two dual-stack CIDRs is allowed.")
	fs.Var(&o.NodePortRange, "service-node-port-range", ""+
		"A port range to reserve for services with NodePort visibility.  This must not overlap with the ephemeral port range on nodes.  "+
		"Example: '30000-32767'. Inclusive at both ends of the range.")
}

// Validate reports what is wrong with the flags.
func (o *ServiceOptions) Validate() error {
	_, err := o.ranges()
	if o.NodePortRange.Size == 0 {
		err = errors.Join(err, errors.New("--service-node-port-range must not be empty"))
	}
	return err
}

// ranges parses --service-cluster-ip-range with kube's rules: one or two
// CIDRs, of different families, each of at least 8 addresses; IPv6 ones
// no shorter than /64, the shortest kube's allocator takes.
func (o *ServiceOptions) ranges() ([]net.IPNet, error) {
	list := strings.Split(o.ClusterIPRanges, ",")
	if o.ClusterIPRanges == "" {
		return nil, errors.New("--service-cluster-ip-range must contain at least one valid cidr")
	}
	if len(list) > 2 {
		return nil, errors.New("--service-cluster-ip-range must not contain more than two entries")
	}
	var out []net.IPNet
	for i, s := range list {
		_, cidr, err := netutils.ParseCIDRSloppy(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("service-cluster-ip-range[%d] is not a valid cidr", i)
		}
		if netutils.RangeSize(cidr) < 8 {
			return nil, fmt.Errorf("the service cluster IP range must be at least %d IP addresses", 8)
		}
		if ones, bits := cidr.Mask.Size(); bits == 128 && ones < 64 {
			return nil, fmt.Errorf("shortest allowed prefix length for service CIDR is 64, got %d", ones)
		}
		out = append(out, *cidr)
	}
	if len(out) == 2 {
		if dual, err := netutils.IsDualStackCIDRs([]*net.IPNet{&out[0], &out[1]}); err != nil || !dual {
			return nil, errors.New("--service-cluster-ip-range[0] and --service-cluster-ip-range[1] must be of different IP family")
		}
	}
	return out, nil
}

// config resolves the flags, with the address and port pods reach this
// server at.
func (o *ServiceOptions) config(publicIP net.IP, publicPort int) (controlplane.ServicesConfig, error) {
	ranges, err := o.ranges()
	if err != nil {
		return controlplane.ServicesConfig{}, err
	}
	return controlplane.ServicesConfig{
		ClusterIPRanges: ranges, NodePortRange: o.NodePortRange, PublicIP: publicIP, PublicPort: publicPort,
	}, nil
}

// publicIP is the address this server advertises to pods, as kube picks
// it: --advertise-address, else --bind-address, else the address of the
// default route's interface.
func publicIP(o *Options) net.IP {
	advertise, bind := o.Generic.AdvertiseAddress, o.SecureServing.BindAddress
	switch {
	case advertise != nil && !advertise.IsUnspecified():
		return advertise
	case bind != nil && !bind.IsUnspecified():
		return bind
	}
	ip, err := utilnet.ChooseHostInterface()
	if err != nil {
		return nil
	}
	return ip
}
