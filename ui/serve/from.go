package serve

import (
	"errors"
	"net"
	"net/netip"
	"strings"
)

// parseFromPatterns reads a from="…" list: comma-separated address
// patterns with * and ? wildcards or CIDR blocks, each optionally negated
// with !. A CIDR that does not parse is an error, as in sshd.
func parseFromPatterns(list string) ([]string, error) {
	if strings.TrimSpace(list) == "" {
		return nil, errors.New("empty pattern list")
	}
	var out []string
	for _, p := range strings.Split(list, ",") {
		p = strings.TrimSpace(p)
		body := strings.TrimPrefix(p, "!")
		if body == "" {
			return nil, errors.New("empty pattern")
		}
		if strings.Contains(body, "/") {
			if _, err := netip.ParsePrefix(body); err != nil {
				return nil, err
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// fromAllows matches a client's address against a from= list as sshd
// does: a negated pattern that matches refuses; otherwise a positive match
// admits and no match refuses. Patterns are matched against the address,
// never a host name: like sshd with its default UseDNS no, bollhav does not
// resolve the client, so a host-name pattern matches nothing.
func fromAllows(patterns []string, addr net.Addr) bool {
	if patterns == nil {
		return true
	}
	ip, ok := clientIP(addr)
	if !ok {
		return false
	}
	text := ip.String()
	allowed := false
	for _, p := range patterns {
		negated := strings.HasPrefix(p, "!")
		body := strings.TrimPrefix(p, "!")
		var match bool
		if strings.Contains(body, "/") {
			prefix, err := netip.ParsePrefix(body)
			match = err == nil && prefix.Contains(ip)
		} else {
			match = wildcardMatch(strings.ToLower(body), strings.ToLower(text))
		}
		if match && negated {
			return false
		}
		allowed = allowed || match
	}
	return allowed
}

// clientIP is the address of a TCP peer, IPv4-mapped IPv6 unmapped.
func clientIP(addr net.Addr) (netip.Addr, bool) {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return netip.Addr{}, false
	}
	ip, ok := netip.AddrFromSlice(tcp.IP)
	return ip.Unmap(), ok
}

// wildcardMatch matches s against a pattern of literal bytes, * (any run)
// and ? (any one byte): sshd's match_pattern.
func wildcardMatch(pattern, s string) bool {
	for len(pattern) > 0 {
		switch pattern[0] {
		case '*':
			for i := len(s); i >= 0; i-- {
				if wildcardMatch(pattern[1:], s[i:]) {
					return true
				}
			}
			return false
		case '?':
			if s == "" {
				return false
			}
		default:
			if s == "" || s[0] != pattern[0] {
				return false
			}
		}
		pattern, s = pattern[1:], s[1:]
	}
	return s == ""
}
