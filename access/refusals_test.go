package access_test

import (
	"testing"

	"github.com/flightgraph/flightgraph/access"
)

// TestClientAddress: a client is its IPv4 host, or its IPv6 /64, whatever the port.
func TestClientAddress(t *testing.T) {
	for _, c := range []struct{ name, remote, want string }{
		{"IPv4", "192.0.2.7:51000", "192.0.2.7"},
		{"IPv4 other port", "192.0.2.7:1", "192.0.2.7"},
		{"IPv6 /64", "[2001:db8:1:2:aaaa::1]:443", "2001:db8:1:2::/64"},
		{"IPv6 same /64", "[2001:db8:1:2:ffff:ffff:ffff:ffff]:9", "2001:db8:1:2::/64"},
		{"IPv6 next /64", "[2001:db8:1:3::1]:9", "2001:db8:1:3::/64"},
		{"no port", "192.0.2.8", "192.0.2.8"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := access.ClientAddress(c.remote); got != c.want {
				t.Errorf("ClientAddress(%q) = %q, want %q", c.remote, got, c.want)
			}
		})
	}
}
