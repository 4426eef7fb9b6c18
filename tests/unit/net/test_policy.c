/* Network permissions (net/policy.h): a table of decisions (policy JSON, host, port, resolved address or
 * none -> allowed and a word the reason must hold), covering deny-all, `true` (public only), exact names,
 * wildcards (subdomains at any depth, never the apex), ports, IP literals matched by value, and the
 * refusal of loopback / private / CGNAT / link-local / metadata / unspecified / multicast addresses
 * unless named literally; then a table of address classes (IPv4, IPv6, mapped, NAT64, 6to4); then a
 * table of policies that must be refused with a message naming the field. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "net/policy.h"

/* ' -> " (malloc'd). */
static char *q(const char *s)
{
    char *t = strdup(s);
    for (char *p = t; *p; p++)
        if (*p == '\'')
            *p = '"';
    return t;
}

/* The request's `permissions.network` value as request/permissions.c hands it to the policy: true, or
 * the list of patterns (false, null and absent: none). The JSON checks here only shape the input. */
static int policy_parse(const json_t *v, const char *field, fb_net_policy **out, fb_error *err)
{
    size_t n = json_is_array(v) ? json_array_size(v) : 0;
    assert_true(!v || json_is_boolean(v) || json_is_null(v) || json_is_array(v));
    const char **pats = calloc(n + 1, sizeof *pats);
    assert_non_null(pats);
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(v, i);
        assert_true(json_is_string(e));
        if (strlen(json_string_value(e)) != json_string_length(e)) {
            free(pats);
            return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, "%s[%zu]: NUL character in pattern", field, i);
        }
        pats[i] = json_string_value(e);
    }
    int rc = fb_net_policy_from_patterns(json_is_true(v), pats, n, field, out, err);
    free(pats);
    return rc;
}

static fb_net_policy *policy_of(const char *text, fb_error *err)
{
    fb_net_policy *p = NULL;
    json_t *v = NULL;
    if (text) {
        char *j = q(text);
        json_error_t jerr;
        v = json_loads(j, JSON_DECODE_ANY, &jerr);
        free(j);
        assert_non_null(v);
    }
    int rc = policy_parse(v, "permissions.network", &p, err);
    json_decref(v);
    return rc == 0 ? p : NULL;
}

static bool to_sockaddr(const char *text, struct sockaddr_storage *ss)
{
    memset(ss, 0, sizeof *ss);
    struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
    if (inet_pton(AF_INET, text, &s4->sin_addr) == 1)
        return s4->sin_family = AF_INET, true;
    if (inet_pton(AF_INET6, text, &s6->sin6_addr) == 1)
        return s6->sin6_family = AF_INET6, true;
    return false;
}

typedef struct decide_case {
    const char *policy; /* JSON; NULL = absent */
    const char *host;
    uint16_t port;
    const char *addr;   /* the resolved address; NULL = the by-name step only */
    bool allowed;
    const char *reason; /* a substring of the reason */
} decide_case;

#define LIST "['api.example.com:443', '*.example.org', '10.0.0.5:8080', '[::1]:9000', 'localhost', " \
             "'169.254.169.254:80', 'internal.corp', '*.Internal.Example.COM.']"

static const decide_case k_decide[] = {
    /* deny-all */
    {NULL, "example.com", 443, NULL, false, "not permitted"},
    {"false", "example.com", 443, NULL, false, "not permitted"},
    {"null", "example.com", 443, "93.184.216.34", false, "not permitted"},
    {"[]", "example.com", 443, NULL, false, "not permitted"},
    /* true: every public destination, any port; never a non-public address */
    {"true", "example.com", 443, NULL, true, "public destinations"},
    {"true", "example.com", 1, "93.184.216.34", true, "public"},
    {"true", "example.com", 80, "2606:2800:220:1:248:1893:25c8:1946", true, "public"},
    {"true", "evil.example", 80, "127.0.0.1", false, "loopback"},
    {"true", "evil.example", 80, "10.1.2.3", false, "private"},
    {"true", "evil.example", 80, "172.16.0.1", false, "private"},
    {"true", "evil.example", 80, "172.31.255.255", false, "private"},
    {"true", "evil.example", 80, "172.32.0.1", true, "public"},
    {"true", "evil.example", 80, "192.168.1.1", false, "private"},
    {"true", "evil.example", 80, "100.64.0.1", false, "carrier-grade"},
    {"true", "evil.example", 80, "100.100.100.200", false, "carrier-grade"},
    {"true", "evil.example", 80, "169.254.169.254", false, "metadata"},
    {"true", "evil.example", 80, "169.254.1.1", false, "link-local"},
    {"true", "evil.example", 80, "0.0.0.0", false, "never"},
    {"true", "evil.example", 80, "224.0.0.1", false, "multicast"},
    {"true", "evil.example", 80, "255.255.255.255", false, "broadcast"},
    {"true", "evil.example", 80, "::1", false, "loopback"},
    {"true", "evil.example", 80, "::", false, "never"},
    {"true", "evil.example", 80, "fd00:ec2::254", false, "private"},
    {"true", "evil.example", 80, "fe80::1", false, "link-local"},
    {"true", "evil.example", 80, "::ffff:127.0.0.1", false, "loopback"},
    {"true", "evil.example", 80, "::ffff:169.254.169.254", false, "metadata"},
    {"true", "evil.example", 80, "64:ff9b::a00:1", false, "private"},
    {"true", "evil.example", 80, "2002:7f00:1::1", false, "loopback"},
    {"true", "127.0.0.1", 80, "127.0.0.1", false, "loopback"},
    {"true", "localhost", 80, "127.0.0.1", false, "named literally"},
    /* exact names, case-insensitive, trailing dot; ports */
    {LIST, "api.example.com", 443, NULL, true, "matches \"api.example.com:443\""},
    {LIST, "API.Example.Com.", 443, "93.184.216.34", true, "api.example.com:443"},
    {LIST, "api.example.com", 80, NULL, false, "api.example.com:80 is not allowed"},
    {LIST, "example.com", 443, NULL, false, "not allowed"},
    {LIST, "xapi.example.com", 443, NULL, false, "not allowed"},
    {LIST, "a.api.example.com", 443, NULL, false, "not allowed"},
    /* wildcards: any depth below, any port, never the apex or a look-alike */
    {LIST, "www.example.org", 1234, NULL, true, "*.example.org"},
    {LIST, "a.b.c.example.org", 80, "93.184.216.34", true, "*.example.org"},
    {LIST, "example.org", 80, NULL, false, "not allowed"},
    {LIST, "badexample.org", 80, NULL, false, "not allowed"},
    {LIST, "example.org.evil.com", 80, NULL, false, "not allowed"},
    {LIST, "x.internal.example.com", 80, NULL, true, "Internal.Example"},
    /* a wildcard never reaches a non-public address (DNS could point anywhere) */
    {LIST, "rebind.example.org", 80, "127.0.0.1", false, "loopback"},
    {LIST, "rebind.example.org", 80, "169.254.169.254", false, "metadata"},
    {LIST, "rebind.example.org", 80, "10.0.0.5", false, "private"},
    /* IP literals: matched by value, port-checked, non-public allowed when named */
    {LIST, "10.0.0.5", 8080, "10.0.0.5", true, "10.0.0.5:8080"},
    {LIST, "10.0.0.5", 8081, NULL, false, "not allowed"},
    {LIST, "10.0.0.6", 8080, NULL, false, "not allowed"},
    {LIST, "10.0.0.5", 8080, "10.0.0.6", false, "not the address"},
    {LIST, "::1", 9000, "::1", true, "[::1]:9000"},
    {LIST, "0:0:0:0:0:0:0:1", 9000, "::1", true, "[::1]:9000"},
    {LIST, "::1", 9001, NULL, false, "[::1]:9001 is not allowed"},
    {LIST, "169.254.169.254", 80, "169.254.169.254", true, "169.254.169.254:80"},
    {LIST, "169.254.169.254", 8080, NULL, false, "not allowed"},
    /* an IP written another way is not the literal ("127.1", hex): treated as a name, no pattern */
    {"['127.0.0.1:80']", "127.1", 80, NULL, false, "not allowed"},
    {"['127.0.0.1:80']", "0x7f000001", 80, NULL, false, "not allowed"},
    {"['127.0.0.1:80']", "localhost", 80, "127.0.0.1", false, "not allowed"},
    /* an exact name may reach loopback / private, not link-local or metadata */
    {LIST, "localhost", 5000, "127.0.0.1", true, "matches \"localhost\""},
    {LIST, "localhost", 5000, "::1", true, "localhost"},
    {LIST, "internal.corp", 443, "10.9.8.7", true, "internal.corp"},
    {LIST, "internal.corp", 443, "100.64.1.1", true, "internal.corp"},
    {LIST, "internal.corp", 443, "169.254.169.254", false, "metadata"},
    {LIST, "internal.corp", 443, "fe80::1", false, "link-local"},
    {LIST, "internal.corp", 443, "0.0.0.0", false, "never"},
    {LIST, "internal.corp", 443, "239.1.1.1", false, "multicast"},
    /* the most literal pattern wins */
    {"['*.example.org', 'db.example.org']", "db.example.org", 5432, "10.0.0.1", true, "db.example.org"},
    {"['*.example.org', 'db.example.org']", "web.example.org", 5432, "10.0.0.1", false, "private"},
    /* invalid hosts and ports are refused */
    {"true", "", 80, NULL, false, "invalid host"},
    {"true", "a..b", 80, NULL, false, "invalid host"},
    {"true", "a b.com", 80, NULL, false, "invalid host"},
    {"true", "fe80::1%eth0", 80, NULL, false, "invalid host"},
    {"true", "example.com", 0, NULL, false, "invalid destination"},
};

static void test_decisions(void **state)
{
    (void)state;
    int failed = 0;
    for (size_t i = 0; i < sizeof k_decide / sizeof *k_decide; i++) {
        const decide_case *c = &k_decide[i];
        fb_error err = {0};
        fb_net_policy *p = policy_of(c->policy, &err);
        if (!p) {
            print_message("# FAIL case %zu: policy %s: %s\n", i, c->policy, err.message);
            failed++;
            continue;
        }
        struct sockaddr_storage ss;
        if (c->addr)
            assert_true(to_sockaddr(c->addr, &ss));
        char reason[512];
        bool got = fb_net_policy_allows(p, c->host, c->port, c->addr ? (struct sockaddr *)&ss : NULL, reason,
                                        sizeof reason);
        if (got != c->allowed || !strstr(reason, c->reason)) {
            print_message("# FAIL case %zu: %s %s:%u via %s: got %s (%s), want %s (%s)\n", i,
                          c->policy ? c->policy : "(absent)", c->host, (unsigned)c->port, c->addr ? c->addr : "-",
                          got ? "allowed" : "refused", reason, c->allowed ? "allowed" : "refused", c->reason);
            failed++;
        }
        fb_net_policy_free(p);
    }
    assert_int_equal(failed, 0);
}

static const struct { const char *addr, *cls; } k_classes[] = {
    {"8.8.8.8", "public"},          {"1.1.1.1", "public"},           {"127.0.0.1", "loopback"},
    {"127.255.255.254", "loopback"}, {"10.0.0.0", "private"},         {"172.16.5.4", "private"},
    {"192.168.0.1", "private"},     {"100.64.0.0", "cgnat"},         {"100.127.255.255", "cgnat"},
    {"100.128.0.0", "public"},      {"169.254.169.254", "metadata"}, {"169.254.0.1", "link-local"},
    {"0.0.0.0", "unspecified"},     {"0.1.2.3", "unspecified"},      {"224.0.0.251", "multicast"},
    {"239.255.255.250", "multicast"}, {"240.0.0.1", "reserved"},     {"255.255.255.255", "broadcast"},
    {"192.0.2.1", "reserved"},      {"198.51.100.7", "reserved"},    {"203.0.113.9", "reserved"},
    {"198.18.0.1", "reserved"},     {"192.0.0.8", "reserved"},
    {"::", "unspecified"},          {"::1", "loopback"},             {"fe80::1", "link-local"},
    {"fc00::1", "private"},         {"fd12:3456::1", "private"},     {"fec0::1", "private"},
    {"ff02::1", "multicast"},       {"2001:db8::1", "reserved"},     {"2001::1", "reserved"},
    {"::ffff:8.8.8.8", "public"},   {"::ffff:10.0.0.1", "private"},  {"64:ff9b::808:808", "public"},
    {"64:ff9b::7f00:1", "loopback"}, {"2002:a9fe:a9fe::1", "metadata"}, {"2606:4700::1111", "public"},
    {"::127.0.0.1", "reserved"},    {"100::1", "reserved"},
};

static void test_classes(void **state)
{
    (void)state;
    int failed = 0;
    for (size_t i = 0; i < sizeof k_classes / sizeof *k_classes; i++) {
        struct sockaddr_storage ss;
        assert_true(to_sockaddr(k_classes[i].addr, &ss));
        const char *got = fb_net_addr_class((struct sockaddr *)&ss);
        if (strcmp(got, k_classes[i].cls) != 0) {
            print_message("# FAIL %s: got %s, want %s\n", k_classes[i].addr, got, k_classes[i].cls);
            failed++;
        }
    }
    assert_int_equal(failed, 0);
}

static const struct { const char *policy, *message; } k_invalid[] = {
    {"['a.com', '']", "permissions.network[1]: empty pattern"},
    {"['a.com:0']", "permissions.network[0]: port out of range"},
    {"['a.com:70000']", "permissions.network[0]: port out of range (1-65535) in \"a.com:70000\""},
    {"['a.com:']", "permissions.network[0]: empty port"},
    {"['a.com:8o']", "port out of range"},
    {"['a.com:-1']", "port out of range"},
    {"['*']", "bare \"*\""},
    {"['*:443']", "bare \"*\""},
    {"['*example.org']", "whole first label"},
    {"['a.*.org']", "whole first label"},
    {"['*.*.org']", "only allowed as the first label"},
    {"['*.']", "[0]"},
    {"['a..com']", "empty label"},
    {"['.a.com']", "empty label"},
    {"['a b.com']", "invalid character"},
    {"['http://a.com']", "[0]"},
    {"['a.com/path']", "invalid character"},
    {"['user@a.com']", "invalid character"},
    {"['::1']", "needs brackets"},
    {"['[::1']", "missing ']'"},
    {"['[a.com]:80']", "invalid IPv6"},
    {"['[::1]x']", "unexpected text"},
    {"['[127.0.0.1]:80']", "invalid IPv6"},
    {"['aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.com']", "longer than 63"},
};

static void test_invalid(void **state)
{
    (void)state;
    int failed = 0;
    for (size_t i = 0; i < sizeof k_invalid / sizeof *k_invalid; i++) {
        fb_error err = {0};
        fb_net_policy *p = policy_of(k_invalid[i].policy, &err);
        if (p || strcmp(fb_error_type(&err), "InvalidRequest") != 0 || !strstr(err.message, k_invalid[i].message)) {
            print_message("# FAIL %s: got %s %s, want InvalidRequest naming %s\n", k_invalid[i].policy,
                          p ? "a policy" : fb_error_type(&err), err.message, k_invalid[i].message);
            failed++;
        }
        fb_net_policy_free(p);
    }
    assert_int_equal(failed, 0);
}

static void test_limits_and_any(void **state)
{
    (void)state;
    fb_error err = {0};
    /* FB_NET_MAX_PATTERNS patterns are fine, one more is refused */
    json_t *many = json_array();
    for (int i = 0; i < FB_NET_MAX_PATTERNS; i++) {
        char name[32];
        snprintf(name, sizeof name, "h%d.example.com", i);
        json_array_append_new(many, json_string(name));
    }
    fb_net_policy *p = NULL;
    assert_int_equal(policy_parse(many, "permissions.network", &p, &err), 0);
    assert_true(fb_net_policy_allows(p, "h255.example.com", 1, NULL, NULL, 0));
    fb_net_policy_free(p);
    json_array_append_new(many, json_string("one-more.example.com"));
    assert_int_equal(policy_parse(many, "permissions.network", &p, &err), -1);
    assert_non_null(strstr(err.message, "more than 256"));
    json_decref(many);
    /* a 253-character name is fine, 254 is not */
    char name[300];
    memset(name, 0, sizeof name);
    for (int i = 0; i < 253; i++)
        name[i] = (i % 50 == 49) ? '.' : 'a';
    json_t *one = json_pack("[s]", name);
    assert_int_equal(policy_parse(one, "permissions.network", &p, &err), 0);
    assert_true(fb_net_policy_allows(p, name, 80, NULL, NULL, 0));
    fb_net_policy_free(p);
    json_decref(one);
    name[253] = 'a';
    one = json_pack("[s]", name);
    assert_int_equal(policy_parse(one, "permissions.network", &p, &err), -1);
    assert_non_null(strstr(err.message, "longer than 253"));
    json_decref(one);
    /* a NUL inside a pattern */
    one = json_array();
    json_array_append_new(one, json_stringn("a.com\0b.com", 11));
    assert_int_equal(policy_parse(one, "permissions.network", &p, &err), -1);
    assert_non_null(strstr(err.message, "NUL"));
    json_decref(one);
    /* allows_any: what the executor asks before starting a proxy */
    assert_false(fb_net_policy_allows_any(NULL));
    const char *deny[] = {NULL, "false", "null", "[]"};
    for (size_t i = 0; i < 4; i++) {
        p = policy_of(deny[i], &err);
        assert_non_null(p);
        assert_false(fb_net_policy_allows_any(p));
        fb_net_policy_free(p);
    }
    p = policy_of("true", &err);
    assert_true(fb_net_policy_allows_any(p));
    fb_net_policy_free(p);
    p = policy_of("['a.com']", &err);
    assert_true(fb_net_policy_allows_any(p));
    fb_net_policy_free(p);
    /* NULL policy and NULL reason are safe */
    assert_false(fb_net_policy_allows(NULL, "a.com", 80, NULL, NULL, 0));
}

/* request/permissions.c hands over already-split values: the same policy, the same refusals. */
static void test_from_patterns(void **state)
{
    (void)state;
    fb_error err = {0};
    fb_net_policy *p = NULL;
    const char *const list[] = {"api.example.com:443", "*.example.org", "10.0.0.5:8080", "[::1]:9000"};
    assert_int_equal(fb_net_policy_from_patterns(false, list, 4, "permissions.network", &p, &err), 0);
    assert_true(fb_net_policy_allows(p, "api.example.com", 443, NULL, NULL, 0));
    assert_false(fb_net_policy_allows(p, "api.example.com", 80, NULL, NULL, 0));
    assert_true(fb_net_policy_allows(p, "x.example.org", 1, NULL, NULL, 0));
    struct sockaddr_storage ss;
    assert_true(to_sockaddr("::1", &ss));
    assert_true(fb_net_policy_allows(p, "::1", 9000, (struct sockaddr *)&ss, NULL, 0));
    fb_net_policy_free(p);
    assert_int_equal(fb_net_policy_from_patterns(true, NULL, 0, "permissions.network", &p, &err), 0);
    assert_true(fb_net_policy_allows_any(p));
    assert_true(to_sockaddr("10.0.0.1", &ss));
    assert_false(fb_net_policy_allows(p, "a.com", 80, (struct sockaddr *)&ss, NULL, 0));
    fb_net_policy_free(p);
    assert_int_equal(fb_net_policy_from_patterns(false, NULL, 0, "permissions.network", &p, &err), 0);
    assert_false(fb_net_policy_allows_any(p));
    fb_net_policy_free(p);
    const char *const bad[] = {"a.com", "b.com:0"};
    assert_int_equal(fb_net_policy_from_patterns(false, bad, 2, "options.permissions.network", &p, &err), -1);
    assert_null(p);
    assert_string_equal(fb_error_type(&err), "InvalidRequest");
    assert_non_null(strstr(err.message, "options.permissions.network[1]: port out of range"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decisions),
        cmocka_unit_test(test_classes),
        cmocka_unit_test(test_invalid),
        cmocka_unit_test(test_limits_and_any),
        cmocka_unit_test(test_from_patterns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
