/* permissions.network: patterns and decisions (see net/policy.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/policy.h"

typedef enum match_kind { MATCH_NONE, MATCH_ALL_PUBLIC, MATCH_WILDCARD, MATCH_NAME, MATCH_IP } match_kind;

typedef struct net_rule {
    char text[FB_NET_MAX_HOST + 16]; /* the pattern as written, for reasons */
    char host[FB_NET_MAX_HOST + 1];  /* lower case, no trailing dot; for a wildcard the suffix after "*." */
    match_kind kind;                 /* MATCH_WILDCARD, MATCH_NAME or MATCH_IP */
    int family;                      /* MATCH_IP: AF_INET or AF_INET6 */
    unsigned char addr[16];
    uint16_t port;                   /* 0 = any */
} net_rule;

struct fb_net_policy {
    bool all_public;
    size_t n;
    net_rule rules[];
};

static void say(char *reason, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *reason, size_t cap, const char *fmt, ...)
{
    if (!reason || cap == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, cap, fmt, ap);
    va_end(ap);
}

/* A DNS name (letters, digits, '-', '_', dots between non-empty labels of at most 63), lowered into out
 * with one trailing dot dropped. 0, or -1 with why. */
static int normalize_name(const char *in, size_t len, char *out, const char **why)
{
    if (len > 0 && in[len - 1] == '.')
        len--;
    if (len == 0)
        return *why = "empty host name", -1;
    if (len > FB_NET_MAX_HOST)
        return *why = "host name longer than 253 characters", -1;
    size_t label = 0;
    for (size_t i = 0; i < len; i++) {
        char c = in[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c == '.') {
            if (label == 0)
                return *why = "empty label in host name", -1;
            label = 0;
        } else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_') {
            if (++label > 63)
                return *why = "host name label longer than 63 characters", -1;
        } else {
            return *why = "invalid character in host name", -1;
        }
        out[i] = c;
    }
    out[len] = '\0';
    return 0;
}

/* An IP literal (strict: inet_pton, so "127.1" and "0x7f000001" are not). */
static bool parse_ip(const char *s, int *family, unsigned char addr[16])
{
    memset(addr, 0, 16);
    if (inet_pton(AF_INET, s, addr) == 1)
        return *family = AF_INET, true;
    if (inet_pton(AF_INET6, s, addr) == 1)
        return *family = AF_INET6, true;
    return false;
}

static int parse_port(const char *s, uint16_t *port, const char **why)
{
    unsigned long v = 0;
    if (!*s)
        return *why = "empty port", -1;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9' || p - s >= 5)
            return *why = "port out of range (1-65535)", -1;
        v = v * 10 + (unsigned long)(*p - '0');
    }
    if (v < 1 || v > 65535)
        return *why = "port out of range (1-65535)", -1;
    *port = (uint16_t)v;
    return 0;
}

/* One pattern: host[:port], *.suffix[:port], a.b.c.d[:port], [v6][:port]. */
static int parse_rule(const char *text, net_rule *r, const char **why)
{
    char host[FB_NET_MAX_HOST + 16];
    size_t len = strlen(text);
    if (len == 0)
        return *why = "empty pattern", -1;
    if (len >= sizeof host)
        return *why = "pattern too long", -1;
    snprintf(r->text, sizeof r->text, "%s", text);
    const char *port = NULL;
    if (text[0] == '[') {
        const char *close = strchr(text, ']');
        if (!close)
            return *why = "missing ']' after an IPv6 address", -1;
        memcpy(host, text + 1, (size_t)(close - text - 1));
        host[close - text - 1] = '\0';
        if (close[1] == ':')
            port = close + 2;
        else if (close[1])
            return *why = "unexpected text after ']'", -1;
        if (!parse_ip(host, &r->family, r->addr) || r->family != AF_INET6)
            return *why = "invalid IPv6 address in brackets", -1;
        r->kind = MATCH_IP;
    } else {
        const char *colon = strchr(text, ':');
        if (colon && strchr(colon + 1, ':'))
            return *why = "an IPv6 address needs brackets ([::1]:8080)", -1;
        size_t hlen = colon ? (size_t)(colon - text) : len;
        memcpy(host, text, hlen);
        host[hlen] = '\0';
        if (colon)
            port = colon + 1;
        if (parse_ip(host, &r->family, r->addr)) {
            r->kind = MATCH_IP;
        } else if (host[0] == '*') {
            if (host[1] != '.' || !host[2])
                return *why = (host[1] ? "'*' is only allowed as a whole first label (\"*.example.org\")"
                                       : "a bare \"*\" is not a pattern (use true to allow every public destination)"),
                       -1;
            if (strchr(host + 2, '*'))
                return *why = "'*' is only allowed as the first label", -1;
            if (normalize_name(host + 2, strlen(host + 2), r->host, why) < 0)
                return -1;
            r->kind = MATCH_WILDCARD;
        } else {
            if (strchr(host, '*'))
                return *why = "'*' is only allowed as a whole first label (\"*.example.org\")", -1;
            if (normalize_name(host, hlen, r->host, why) < 0)
                return -1;
            r->kind = MATCH_NAME;
        }
    }
    r->port = 0;
    if (port && parse_port(port, &r->port, why) < 0)
        return -1;
    return 0;
}

int fb_net_policy_from_patterns(bool all, const char *const *patterns, size_t n, const char *field,
                                fb_net_policy **out, fb_error *err)
{
    *out = NULL;
    if (n > FB_NET_MAX_PATTERNS)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, E2BIG, "%s: more than %d patterns", field,
                            FB_NET_MAX_PATTERNS);
    fb_net_policy *p = calloc(1, sizeof *p + n * sizeof(net_rule));
    if (!p)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "%s: out of memory", field);
    p->all_public = all;
    for (size_t i = 0; i < n; i++) {
        const char *why = NULL;
        if (parse_rule(patterns[i] ? patterns[i] : "", &p->rules[i], &why) < 0) {
            fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, "%s[%zu]: %s in \"%.300s\"", field, i, why,
                         patterns[i] ? patterns[i] : "");
            fb_net_policy_free(p);
            return -1;
        }
    }
    p->n = n;
    *out = p;
    return 0;
}

void fb_net_policy_free(fb_net_policy *p)
{
    free(p);
}

bool fb_net_policy_allows_any(const fb_net_policy *p)
{
    return p && (p->all_public || p->n > 0);
}

/* ---- address classes ---- */

typedef enum addr_class {
    AC_PUBLIC, AC_LOOPBACK, AC_PRIVATE, AC_CGNAT, AC_RESERVED, AC_LINK_LOCAL, AC_METADATA, AC_UNSPECIFIED,
    AC_MULTICAST, AC_BROADCAST,
} addr_class;

static const char *const k_class_names[] = {"public", "loopback", "private", "cgnat", "reserved", "link-local",
                                            "metadata", "unspecified", "multicast", "broadcast"};

static const char *const k_class_text[] = {"a public", "a loopback", "a private", "a carrier-grade NAT (shared)",
                                           "a reserved", "a link-local", "the cloud metadata", "an unspecified",
                                           "a multicast", "the broadcast"};

static addr_class classify4(const unsigned char a[4])
{
    uint32_t v = ((uint32_t)a[0] << 24) | ((uint32_t)a[1] << 16) | ((uint32_t)a[2] << 8) | a[3];
    static const struct { uint32_t net; int bits; addr_class cls; } table[] = {
        {0x00000000, 8, AC_UNSPECIFIED},  /* 0/8 "this network": connect() to it reaches the local host */
        {0x7f000000, 8, AC_LOOPBACK},     /* 127/8 */
        {0x0a000000, 8, AC_PRIVATE},      /* 10/8 */
        {0xac100000, 12, AC_PRIVATE},     /* 172.16/12 */
        {0xc0a80000, 16, AC_PRIVATE},     /* 192.168/16 */
        {0x64400000, 10, AC_CGNAT},       /* 100.64/10 (also Alibaba's metadata 100.100.100.200) */
        {0xa9fea9fe, 32, AC_METADATA},    /* 169.254.169.254 (AWS, GCP, Azure, OpenStack...) */
        {0xa9fe0000, 16, AC_LINK_LOCAL},  /* 169.254/16 */
        {0xc0000000, 24, AC_RESERVED},    /* 192.0.0/24 IETF protocol assignments */
        {0xc0000200, 24, AC_RESERVED},    /* 192.0.2/24 TEST-NET-1 */
        {0xc6336400, 24, AC_RESERVED},    /* 198.51.100/24 TEST-NET-2 */
        {0xcb007100, 24, AC_RESERVED},    /* 203.0.113/24 TEST-NET-3 */
        {0xc6120000, 15, AC_RESERVED},    /* 198.18/15 benchmarking */
        {0xc0586300, 24, AC_RESERVED},    /* 192.88.99/24 6to4 relay anycast */
        {0xffffffff, 32, AC_BROADCAST},
        {0xe0000000, 4, AC_MULTICAST},    /* 224/4 */
        {0xf0000000, 4, AC_RESERVED},     /* 240/4 */
    };
    for (size_t i = 0; i < sizeof table / sizeof *table; i++) {
        uint32_t mask = table[i].bits == 0 ? 0 : ~(uint32_t)0 << (32 - table[i].bits);
        if ((v & mask) == table[i].net)
            return table[i].cls;
    }
    return AC_PUBLIC;
}

static addr_class classify6(const unsigned char a[16])
{
    static const unsigned char zero[16] = {0};
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    static const unsigned char nat64[12] = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
    if (memcmp(a, zero, 16) == 0)
        return AC_UNSPECIFIED;
    if (memcmp(a, zero, 15) == 0 && a[15] == 1)
        return AC_LOOPBACK;
    if (memcmp(a, mapped, 12) == 0 || memcmp(a, nat64, 12) == 0)
        return classify4(a + 12);
    if (a[0] == 0x20 && a[1] == 0x02) /* 2002::/16 6to4 carries an IPv4 address in bits 16-47 */
        return classify4(a + 2);
    if (a[0] == 0xff)
        return AC_MULTICAST;
    if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80)
        return AC_LINK_LOCAL; /* fe80::/10 */
    if (a[0] == 0xfe && (a[1] & 0xc0) == 0xc0)
        return AC_PRIVATE;    /* fec0::/10 site-local (deprecated) */
    if ((a[0] & 0xfe) == 0xfc)
        return AC_PRIVATE;    /* fc00::/7 unique local (includes AWS's fd00:ec2::254) */
    if (a[0] == 0x00 && a[1] == 0x64 && a[2] == 0xff && a[3] == 0x9b)
        return AC_PRIVATE;    /* 64:ff9b:1::/48 local-use NAT64 (and the rest of 64:ff9b::/32) */
    if (a[0] == 0x20 && a[1] == 0x01 && a[2] == 0x0d && a[3] == 0xb8)
        return AC_RESERVED;   /* 2001:db8::/32 documentation */
    if (a[0] == 0x20 && a[1] == 0x01 && a[2] == 0 && a[3] == 0)
        return AC_RESERVED;   /* 2001::/32 Teredo (an obfuscated IPv4 address) */
    if ((a[0] & 0xe0) != 0x20)
        return AC_RESERVED;   /* outside 2000::/3, the global unicast space */
    return AC_PUBLIC;
}

static addr_class classify(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return classify4((const unsigned char *)&((const struct sockaddr_in *)(const void *)sa)->sin_addr);
    if (sa->sa_family == AF_INET6)
        return classify6(((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr.s6_addr);
    return AC_RESERVED;
}

const char *fb_net_addr_class(const struct sockaddr *addr)
{
    return k_class_names[classify(addr)];
}

/* ---- the decision ---- */

/* host is the normalized request host; ip/family set when it is an IP literal. */
static const net_rule *find_rule(const fb_net_policy *p, const char *host, bool is_ip, int family,
                                 const unsigned char *ip, uint16_t port)
{
    const net_rule *best = NULL;
    size_t hlen = strlen(host);
    for (size_t i = 0; i < p->n; i++) {
        const net_rule *r = &p->rules[i];
        if (r->port && r->port != port)
            continue;
        bool hit = false;
        if (r->kind == MATCH_IP)
            hit = is_ip && r->family == family && memcmp(r->addr, ip, family == AF_INET ? 4 : 16) == 0;
        else if (r->kind == MATCH_NAME)
            hit = !is_ip && strcmp(r->host, host) == 0;
        else if (r->kind == MATCH_WILDCARD) {
            size_t slen = strlen(r->host);
            hit = !is_ip && hlen > slen + 1 && host[hlen - slen - 1] == '.' && strcmp(host + hlen - slen, r->host) == 0;
        }
        if (hit && (!best || r->kind > best->kind)) /* the most literal pattern wins */
            best = r;
    }
    return best;
}

bool fb_net_policy_allows(const fb_net_policy *p, const char *host, uint16_t port, const struct sockaddr *resolved,
                          char *reason, size_t cap)
{
    say(reason, cap, "network access is not permitted (permissions.network)");
    if (!fb_net_policy_allows_any(p))
        return false;
    if (!host || port == 0) {
        say(reason, cap, "invalid destination");
        return false;
    }
    char norm[FB_NET_MAX_HOST + 1];
    int family = 0;
    unsigned char ip[16];
    bool is_ip = strlen(host) < sizeof norm && parse_ip(host, &family, ip);
    const char *why = NULL;
    if (is_ip)
        snprintf(norm, sizeof norm, "%s", host);
    else if (normalize_name(host, strlen(host), norm, &why) < 0) {
        say(reason, cap, "invalid host: %s", why);
        return false;
    }
    const net_rule *rule = find_rule(p, norm, is_ip, family, ip, port);
    match_kind kind = rule ? rule->kind : p->all_public ? MATCH_ALL_PUBLIC : MATCH_NONE;
    if (kind == MATCH_NONE) {
        say(reason, cap, "%s%s%s:%u is not allowed by permissions.network", is_ip && family == AF_INET6 ? "[" : "",
            norm, is_ip && family == AF_INET6 ? "]" : "", (unsigned)port);
        return false;
    }
    char matched[FB_NET_MAX_HOST + 32];
    if (rule)
        snprintf(matched, sizeof matched, "matches \"%s\"", rule->text);
    else
        snprintf(matched, sizeof matched, "public destinations allowed (permissions.network: true)");
    if (!resolved) {
        say(reason, cap, "%s", matched);
        return true;
    }
    if (resolved->sa_family != AF_INET && resolved->sa_family != AF_INET6) {
        say(reason, cap, "unsupported address family %d", resolved->sa_family);
        return false;
    }
    addr_class cls = classify(resolved);
    char text[INET6_ADDRSTRLEN] = "?";
    const void *raw = resolved->sa_family == AF_INET
                          ? (const void *)&((const struct sockaddr_in *)(const void *)resolved)->sin_addr
                          : (const void *)&((const struct sockaddr_in6 *)(const void *)resolved)->sin6_addr;
    inet_ntop(resolved->sa_family, raw, text, sizeof text);
    if (is_ip && (resolved->sa_family != family || memcmp(raw, ip, family == AF_INET ? 4 : 16) != 0)) {
        say(reason, cap, "%s is not the address %s named", text, norm);
        return false;
    }
    bool ok;
    switch (cls) {
    case AC_PUBLIC:
        ok = true;
        break;
    case AC_LOOPBACK: case AC_PRIVATE: case AC_CGNAT: case AC_RESERVED:
        ok = kind == MATCH_NAME || kind == MATCH_IP;
        break;
    case AC_LINK_LOCAL: case AC_METADATA:
        ok = kind == MATCH_IP;
        break;
    default: /* unspecified, multicast, broadcast */
        ok = false;
        break;
    }
    if (ok)
        say(reason, cap, "%s", matched);
    else if (cls == AC_UNSPECIFIED || cls == AC_MULTICAST || cls == AC_BROADCAST)
        say(reason, cap, "%s is %s address (never allowed)", text, k_class_text[cls]);
    else if (cls == AC_LINK_LOCAL || cls == AC_METADATA)
        say(reason, cap, "%s is %s address (allowed only when the address itself is in permissions.network)", text,
            k_class_text[cls]);
    else
        say(reason, cap, "%s is %s address (allowed only when the host is named literally in permissions.network)",
            text, k_class_text[cls]);
    return ok;
}
