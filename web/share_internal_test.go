package web

import "testing"

// IPv6 clients are counted by their /64 (issue 40): four addresses of one
// /64 exhausted --max-conns when each was counted apart. IPv4 addresses
// and IPv4-mapped ones stay as they are.
func TestShareCountsIPv6By64(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"2001:db8:1:2::1", "2001:db8:1:2:ffff:ffff:ffff:ffff", true},
		{"2001:db8:1:2::1", "2001:db8:1:3::1", false},
		{"203.0.113.5", "203.0.113.6", false},
		{"::ffff:203.0.113.5", "203.0.113.5", false},
	} {
		if got := share(tc.a) == share(tc.b); got != tc.same {
			t.Errorf("share(%s) %q, share(%s) %q: same %v, want %v", tc.a, share(tc.a), tc.b, share(tc.b), got, tc.same)
		}
	}
	l := newLimitListener(nil, 8, 2)
	if !l.take(share("2001:db8::1")) || !l.take(share("2001:db8::2")) || l.take(share("2001:db8::3")) {
		t.Errorf("a /64's share of 2 connections: a third address of it got one")
	}
}
