package catalog

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// DefaultMetricsAddr is where /metrics listens when neither the node's configuration nor the
// file says: loopback only, so metrics never reach the public listener (decisions.md).
const DefaultMetricsAddr = "127.0.0.1:9464"

// MetricsOff as metrics_addr serves no metrics at all.
const MetricsOff = "off"

// publicURL checks server.public_url: an absolute http(s) URL, perhaps with a path prefix
// (a gateway behind a proxy at /llm), without a query; the trailing slash is dropped.
func (v *validator) publicURL(s string) string {
	if s == "" {
		return ""
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(u.Host, ":") {
		v.fail("", "server.public_url", fmt.Sprintf("%q must be the gateway's address as clients reach it, such as https://llm.example.com", s))
		return ""
	}
	return strings.TrimRight(s, "/")
}

// metricsAddr checks server.metrics_addr: host:port (port 0 picks a free one) or "off".
func (v *validator) metricsAddr(s string) string {
	if s == "" || s == MetricsOff {
		return s
	}
	_, port, err := net.SplitHostPort(s)
	if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 0 || n > 65535 {
		v.fail("", "server.metrics_addr", fmt.Sprintf("%q must be host:port (such as 127.0.0.1:9464) or off", s))
		return ""
	}
	return s
}

// AnyOrigin as the only entry of server.cors_origins admits every browser origin.
const AnyOrigin = "*"

// corsOrigins checks server.cors_origins: absent means every origin; each entry is "*" or
// an origin (scheme://host[:port], no path), kept lower-case for comparison.
func (v *validator) corsOrigins(list []string) []string {
	if list == nil {
		return []string{AnyOrigin}
	}
	out := make([]string, 0, len(list))
	for i, o := range list {
		field := fmt.Sprintf("server.cors_origins[%d]", i)
		if o == AnyOrigin {
			out = append(out, o)
			continue
		}
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
			(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(u.Host, ":") ||
			strings.ContainsAny(u.Host, "*%") {
			v.fail("", field, fmt.Sprintf("%q must be \"*\" or an origin such as https://app.example.com (scheme and host, no path)", o))
			continue
		}
		out = append(out, strings.ToLower(u.Scheme+"://"+u.Host))
	}
	return out
}
