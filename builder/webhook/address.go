package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"syscall"
)

// ErrRefused is wrapped by every refusal of D43's address rules.
var ErrRefused = errors.New("refused by the webhook address rules")

// Resolver finds a host's addresses; *net.Resolver satisfies it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Rules are D43's address rules: https only unless AllowHTTP (webhooks.allow_http), public
// addresses only unless AllowPrivate (webhooks.allow_private). They are checked when an
// endpoint is added (CheckURL, every address the name resolves to) and at every delivery,
// on the address actually connected to (Control): DNS can change between the two, and a
// name can resolve to a public address for the check and a private one for the connection.
type Rules struct {
	AllowHTTP, AllowPrivate bool
	// Resolver resolves names for CheckURL; nil means net.DefaultResolver.
	Resolver Resolver
}

// CheckURL checks an endpoint's URL: its scheme, and every address its host resolves to.
func (r Rules) CheckURL(ctx context.Context, raw string) error {
	u, err := r.checkScheme(raw)
	if err != nil {
		return err
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); err == nil {
		return r.checkAddr(host, ip)
	}
	res := r.Resolver
	if res == nil {
		res = net.DefaultResolver
	}
	ips, err := res.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return fmt.Errorf("resolve %s: %w", host, err)
	}
	for _, ip := range ips {
		if err := r.checkAddr(host, ip); err != nil {
			return err
		}
	}
	return nil
}

// checkScheme parses raw and checks what can be checked without the network.
func (r Rules) checkScheme(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Hostname() == "" {
		return nil, fmt.Errorf("%w: %q is not an absolute URL such as https://partner.example/hooks", ErrRefused, raw)
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && r.AllowHTTP:
	case u.Scheme == "http":
		return nil, fmt.Errorf("%w: the URL must be https:// (webhooks.allow_http permits http://)", ErrRefused)
	default:
		return nil, fmt.Errorf("%w: the URL must be https://, not %s://", ErrRefused, u.Scheme)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("%w: the port must be 1 to 65535 (got %s)", ErrRefused, p)
		}
	}
	if u.User != nil {
		return nil, fmt.Errorf("%w: the URL must not hold a user name or password (deliveries are signed instead)", ErrRefused)
	}
	if u.Fragment != "" {
		return nil, fmt.Errorf("%w: the URL must not have a #fragment", ErrRefused)
	}
	return u, nil
}

func (r Rules) checkAddr(host string, ip netip.Addr) error {
	if r.AllowPrivate || Public(ip) {
		return nil
	}
	if host == ip.String() {
		return fmt.Errorf("%w: %s is not a public address (webhooks.allow_private permits it)", ErrRefused, ip)
	}
	return fmt.Errorf("%w: %s resolves to %s, which is not a public address (webhooks.allow_private permits it)", ErrRefused, host, ip)
}

// Control is a net.Dialer's Control: it refuses a connection to an address that is not
// public unless AllowPrivate, after DNS, on the address about to be connected to.
func (r Rules) Control(_, address string, _ syscall.RawConn) error {
	if r.AllowPrivate {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot read the address %q", ErrRefused, address)
	}
	if !Public(ap.Addr()) {
		return fmt.Errorf("%w: %s is not a public address (webhooks.allow_private permits it)", ErrRefused, ap.Addr())
	}
	return nil
}

// nonPublic are the ranges of special-purpose addresses (RFC 6890's registries) that netip's
// predicates do not already name: shared, documentation, benchmarking, reserved and the
// like. None of them is a partner's server on the Internet. The IPv6 ones outside 2000::/3
// (NAT64's 64:ff9b::/96, discard-only 100::/64, site-local fec0::/10) need no entry:
// globalUnicast6 leaves them out.
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"), // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"), // reserved, and the broadcast address
	netip.MustParsePrefix("2001::/23"),   // IETF protocol assignments (Teredo, ORCHID...)
	netip.MustParsePrefix("2001:db8::/32"),
	netip.MustParsePrefix("3fff::/20"), // documentation (RFC 9637)
	netip.MustParsePrefix("2002::/16"), // 6to4: may wrap a private IPv4 address
}

// Public reports whether ip is a public unicast address: not loopback, private, link-local,
// multicast, unspecified or another special-purpose range. An IPv4 address written as IPv6
// (::ffff:10.0.0.1) is judged as the IPv4 address it is.
func Public(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() || !ip.IsGlobalUnicast() {
		return false
	}
	if ip.Is6() && !globalUnicast6.Contains(ip) {
		return false // ::/96 (IPv4-compatible), ::ffff:0:0:0/96 (SIIT) and the reserved rest
	}
	for _, p := range nonPublic {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// globalUnicast6 is the only IPv6 range IANA allocates public unicast addresses from; the
// addresses outside it that netip's predicates pass include forms that reach an IPv4
// address (::127.0.0.1 where a host routes ::/96, ::ffff:0:127.0.0.1 where it translates).
var globalUnicast6 = netip.MustParsePrefix("2000::/3")
