/* Network permissions: the request's `permissions.network` decoded, and the decision whether one
 * destination (host, port and, once resolved, address) may be reached through the proxy (net/proxy.h).
 *
 * Shape:
 *   false, absent (NULL), null   deny everything (no proxy is started)
 *   true                         every PUBLIC destination, any port (no private/loopback/metadata address)
 *   ["api.example.com:443",      a list of host[:port] patterns; without a port, any port:
 *    "*.example.org",              exact name (case-insensitive, one trailing dot ignored)
 *    "10.0.0.5:8080",              "*.suffix": any name strictly below suffix, at any depth (not suffix itself)
 *    "[::1]:8080"]                 IPv4 literal, or IPv6 literal in brackets
 *
 * Decision (fb_net_policy_allows), in two steps, so that a name no pattern allows is never even resolved:
 *  1. by name: host:port must match a pattern (or the policy be `true`). IP literals match only IP
 *     patterns (by value, so "127.1" is not "127.0.0.1"), names only name patterns.
 *  2. by address (once the proxy resolved the name): a public address is allowed; a non-public one only
 *     when the destination is named literally:
 *       loopback, private (RFC 1918, ULA, site-local), CGNAT, reserved/documentation ranges:
 *           allowed when the pattern that matched is an exact name or the IP literal itself;
 *       link-local, including the cloud metadata address 169.254.169.254 (and fd00:ec2::254, which is ULA):
 *           allowed only by the IP literal itself (a name could be re-pointed there by DNS);
 *       unspecified (0.0.0.0/8, ::: connecting there reaches the host's own listeners), multicast and
 *       broadcast: never.
 *     IPv4-mapped (::ffff:a.b.c.d), NAT64 (64:ff9b::/96) and 6to4 (2002::/16) addresses are judged by the
 *     IPv4 address they carry. */
#ifndef FB_NET_POLICY_H
#define FB_NET_POLICY_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "util/error.h"

#define FB_NET_MAX_PATTERNS 256  /* entries of permissions.network */
#define FB_NET_MAX_HOST 253      /* a DNS name's longest text form */

typedef struct fb_net_policy fb_net_policy;

/* A policy from the request's decoded `permissions.network` (request/permissions.c's network_all /
 * network_allow): all = `true`, else the n "host[:port]" patterns. Strict: an invalid pattern is an
 * "InvalidRequest" naming it, e.g. `permissions.network[1]: port 70000 out of range (1-65535) in
 * "a.com:70000"` (field is the list's path). On success *out is a policy (never NULL; deny-all when
 * nothing is allowed) owned by the caller. */
int fb_net_policy_from_patterns(bool all, const char *const *patterns, size_t n, const char *field,
                                fb_net_policy **out, fb_error *err);
void fb_net_policy_free(fb_net_policy *p);

/* Whether anything at all may be allowed (false: deny-all, no proxy needed). NULL = deny-all. */
bool fb_net_policy_allows_any(const fb_net_policy *p);

/* The decision for host:port (host as the client named it: a name or an IP literal, IPv6 without
 * brackets). resolved NULL: the by-name step only; else both steps for that address (AF_INET or
 * AF_INET6). reason (may be NULL) gets why, e.g. `matches "*.example.org"` or `10.0.0.5 is a private
 * address (allowed only when named literally in permissions.network)`. p NULL = deny-all. */
bool fb_net_policy_allows(const fb_net_policy *p, const char *host, uint16_t port, const struct sockaddr *resolved,
                          char *reason, size_t cap);

/* The class of an address, as the decision sees it: "public", "loopback", "private", "cgnat",
 * "reserved", "link-local", "metadata", "unspecified", "multicast", "broadcast" (static strings). */
const char *fb_net_addr_class(const struct sockaddr *addr);

#endif
