package sharding

import (
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/utils/clock"

	"github.com/kinformer/kinformer/cache"
)

// Defaults of Config, those of client-go's leader election.
const (
	// DefaultRanges is the number of ranges when Config.Ranges is zero.
	DefaultRanges = 16
	// DefaultLeaseDuration is Config.LeaseDuration's default.
	DefaultLeaseDuration = 15 * time.Second
	// DefaultRenewDeadline is Config.RenewDeadline's default.
	DefaultRenewDeadline = 10 * time.Second
	// DefaultRetryPeriod is Config.RetryPeriod's default.
	DefaultRetryPeriod = 2 * time.Second
)

// Labels of the group's Leases.
const (
	// LabelGroup holds the group name on every Lease of a group.
	LabelGroup = "sharding.kinformer.io/group"
	// LabelRole is "member" on member Leases and "range" on range Leases.
	LabelRole = "sharding.kinformer.io/role"
	// LabelRanges holds the group's number of ranges, on every Lease.
	LabelRanges = "sharding.kinformer.io/ranges"
)

// ErrInvalidConfig is wrapped by the errors NewMember returns for a Config
// it cannot use.
var ErrInvalidConfig = errors.New("invalid sharding config")

// Config is what NewMember needs. The zero value of every duration, of
// Ranges and of Clock means its default.
type Config struct {
	// Client reads and writes the group's Leases, for example
	// clientset.CoordinationV1(). Required.
	Client coordinationv1client.LeasesGetter
	// Namespace holds the group's Leases. Required.
	Namespace string
	// Group names the group: replicas with the same Namespace and Group
	// share the ranges. A DNS-1123 label. Required.
	Group string
	// Identity names this replica, unique in the group (a pod name, for
	// example). A DNS-1123 label. Required.
	Identity string
	// Ranges is the number of ranges the hash space is cut into
	// (cache.EvenShardRanges), the same for every member of the group;
	// zero means DefaultRanges. It bounds the number of replicas that get
	// work, and each range an informer owns costs it one list and one
	// watch.
	Ranges int
	// LeaseDuration is how long others wait for a Lease of this member to
	// change before they take it as expired, in whole seconds (Leases
	// store seconds); zero means DefaultLeaseDuration. It bounds how long a
	// crashed member's ranges stay unowned.
	LeaseDuration time.Duration
	// RenewDeadline is how long after the start of its last successful
	// renewal the member acts on a range; shorter than LeaseDuration, the
	// margin absorbing clock rate differences and pauses. Zero means
	// DefaultRenewDeadline.
	RenewDeadline time.Duration
	// RetryPeriod is the time between two rounds of reading the group's
	// Leases and renewing this member's; shorter than RenewDeadline. Zero
	// means DefaultRetryPeriod.
	RetryPeriod time.Duration
	// KeepLeasesOnStop makes Run, when its context ends, stop acting on
	// the member's ranges without releasing them or deleting its member
	// Lease, as a crash would: the others take the ranges over only once
	// the Leases expire. By default (false) Run releases them, so that the
	// others take them at once.
	KeepLeasesOnStop bool
	// Clock measures renew deadlines and Lease expiry; nil means the real
	// clock. Tests pass a fake one.
	Clock clock.WithTicker
}

// withDefaults returns c with every default applied, or an error wrapping
// ErrInvalidConfig.
func (c Config) withDefaults() (Config, error) {
	if c.Ranges == 0 {
		c.Ranges = DefaultRanges
	}
	if c.LeaseDuration == 0 {
		c.LeaseDuration = DefaultLeaseDuration
	}
	if c.RenewDeadline == 0 {
		c.RenewDeadline = DefaultRenewDeadline
	}
	if c.RetryPeriod == 0 {
		c.RetryPeriod = DefaultRetryPeriod
	}
	if c.Clock == nil {
		c.Clock = clock.RealClock{}
	}
	invalid := func(format string, args ...any) (Config, error) {
		return Config{}, fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, args...))
	}
	switch {
	case c.Client == nil:
		return invalid("no Client")
	case c.Namespace == "":
		return invalid("no Namespace")
	case c.Ranges < 1:
		return invalid("Ranges %d is below 1", c.Ranges)
	case c.LeaseDuration < time.Second || c.LeaseDuration%time.Second != 0:
		return invalid("LeaseDuration %v is not a whole number of seconds", c.LeaseDuration)
	case c.RenewDeadline <= 0 || c.RenewDeadline >= c.LeaseDuration:
		return invalid("RenewDeadline %v is not between 0 and LeaseDuration %v", c.RenewDeadline, c.LeaseDuration)
	case c.RetryPeriod <= 0 || c.RetryPeriod >= c.RenewDeadline:
		return invalid("RetryPeriod %v is not between 0 and RenewDeadline %v", c.RetryPeriod, c.RenewDeadline)
	}
	for what, v := range map[string]string{"Group": c.Group, "Identity": c.Identity} {
		if errs := validation.IsDNS1123Label(v); len(errs) > 0 {
			return invalid("%s %q: %v", what, v, errs)
		}
	}
	for _, name := range []string{memberLeaseName(c.Group, c.Identity), rangeLeaseName(c.Group, c.Ranges-1, c.Ranges)} {
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			return invalid("Lease name %q: %v", name, errs)
		}
	}
	if _, err := cache.EvenShardRanges(c.Ranges); err != nil {
		return invalid("%v", err)
	}
	return c, nil
}

// memberLeaseName is the name of identity's member Lease in group.
func memberLeaseName(group, identity string) string {
	return group + "-member-" + identity
}

// rangeLeaseName is the name of range index's Lease of a group of n ranges.
func rangeLeaseName(group string, index, n int) string {
	return fmt.Sprintf("%s-range-%d-of-%d", group, index, n)
}
