/* Decoding `permissions` (request/permissions.h). Every rejection is an "InvalidRequest" whose message starts
 * with the JSON path of the offending value. */
#include "request/permissions.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "request/limits.h"
#include "util/json.h"

#define BAD(...) fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, __VA_ARGS__)
#define OOM(what) fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "%s: out of memory", what)

static const struct {
    const char *name;
    unsigned bits;
} k_presets[] = {
    {"allowAll", FB_PRESET_ALL},         {"allowAllFs", FB_PRESET_FS},   {"allowAllNetwork", FB_PRESET_NETWORK},
    {"allowAllChildProcess", FB_PRESET_CHILD}, {"allowAllEnv", FB_PRESET_ENV},
};

const char *fb_permissions_presets(void)
{
    return "allowAll, allowAllFs, allowAllNetwork, allowAllChildProcess, allowAllEnv";
}

/* ---- reserved environment keys ---- */

/* Exact names. fnbox sets the first five itself; glibc ignores the next group for set-uid programs (its
 * unsecure-envvars list: they redirect what the loader and libc load); then the runtimes' start-up hooks
 * (code or options loaded before the harness); then the proxy variables fnbox points at its own proxy. */
static const char *const k_reserved_env[] = {
    "PATH", "HOME", "TMPDIR", "USER", "LOGNAME",
    "GCONV_PATH", "GETCONF_DIR", "GLIBC_TUNABLES", "HOSTALIASES", "LOCALDOMAIN", "LOCPATH", "MALLOC_TRACE",
    "NIS_PATH", "NLSPATH", "RESOLV_HOST_CONF", "RES_OPTIONS", "TZDIR",
    "NODE_OPTIONS", "NODE_PATH", "NODE_EXTRA_CA_CERTS", "NODE_REPL_EXTERNAL_MODULE", "UV_THREADPOOL_SIZE",
    "RUBYOPT", "RUBYLIB", "RUBYSHELL", "GEM_HOME", "GEM_PATH", "BUNDLE_GEMFILE",
    "PHPRC", "PHP_INI_SCAN_DIR",
    /* set by fnbox to its proxy when the network is allowed (net/proxy.c) */
    "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy", "no_proxy",
};
static const char *const k_reserved_env_prefixes[] = {"LD_", "PYTHON", "MALLOC_", "FNBOX_"};

bool fb_env_key_reserved(const char *key)
{
    for (size_t i = 0; i < sizeof k_reserved_env / sizeof *k_reserved_env; i++)
        if (strcmp(key, k_reserved_env[i]) == 0)
            return true;
    for (size_t i = 0; i < sizeof k_reserved_env_prefixes / sizeof *k_reserved_env_prefixes; i++)
        if (strncmp(key, k_reserved_env_prefixes[i], strlen(k_reserved_env_prefixes[i])) == 0)
            return true;
    return false;
}

/* ---- small owned string lists ---- */

typedef struct strlist {
    char **v;
    size_t n, cap;
} strlist;

static int strlist_push(strlist *l, char *s)
{
    if (!s)
        return -1;
    if (l->n + 2 > l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        char **v = realloc(l->v, cap * sizeof *v);
        if (!v) {
            free(s);
            return -1;
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = s;
    l->v[l->n] = NULL;
    return 0;
}

static void strlist_free(const char *const *v)
{
    if (!v)
        return;
    for (const char *const *p = v; *p; p++)
        free((char *)*p); /* owned: const only for readers */
    free((void *)v);
}

/* ---- presets ---- */

static int preset_bits(const json_t *v, const char *where, unsigned *bits, fb_error *err)
{
    if (!json_is_string(v))
        return BAD("%s: must be a preset name (%s), got %s", where, fb_permissions_presets(), fb_json_type_name(v));
    const char *s = json_string_value(v);
    for (size_t i = 0; i < sizeof k_presets / sizeof *k_presets; i++)
        if (strlen(s) == json_string_length(v) && strcmp(s, k_presets[i].name) == 0) {
            *bits |= k_presets[i].bits;
            return 0;
        }
    return BAD("%s: unknown preset '%.64s' (expected %s)", where, s, fb_permissions_presets());
}

static int parse_presets(const json_t *v, const char *field, unsigned *bits, fb_error *err)
{
    char where[128];
    if (!json_is_array(v))
        return preset_bits(v, field, bits, err);
    size_t i;
    json_t *item;
    json_array_foreach(v, i, item) {
        snprintf(where, sizeof where, "%s[%zu]", field, i);
        if (preset_bits(item, where, bits, err) < 0)
            return -1;
    }
    return 0;
}

/* ---- env ---- */

static int parse_env(const json_t *v, const char *field, bool any_key, fb_permissions *p, fb_error *err)
{
    if (!json_is_object(v))
        return BAD("%s: must be an object {NAME: \"value\"}, got %s (fnbox never passes its own environment; "
                   "name each variable)",
                   field, fb_json_type_name(v));
    if (json_object_size(v) > FB_MAX_ENV_VARS)
        return BAD("%s: %zu variables is more than the maximum of %d", field, json_object_size(v), FB_MAX_ENV_VARS);
    strlist l = {0};
    size_t total = 0;
    const char *key;
    size_t key_len;
    json_t *val;
    int rc = 0;
    json_object_keylen_foreach((json_t *)v, key, key_len, val) {
        if (key_len == 0)
            rc = BAD("%s: a variable name must not be empty", field);
        else if (strlen(key) != key_len)
            rc = BAD("%s.%.64s: a variable name must not contain a NUL character", field, key);
        else if (strchr(key, '='))
            rc = BAD("%s.%.64s: a variable name must not contain '='", field, key);
        else if (key_len > FB_MAX_NAME_BYTES)
            rc = BAD("%s.%.64s...: a variable name is at most %d bytes", field, key, FB_MAX_NAME_BYTES);
        else if (!any_key && fb_env_key_reserved(key))
            rc = BAD("%s.%s: reserved (fnbox sets it, or it changes how the runtime starts); allow it with "
                     "the allowAllEnv preset",
                     field, key);
        else if (!json_is_string(val))
            rc = BAD("%s.%s: must be a string, got %s", field, key, fb_json_type_name(val));
        else if (strlen(json_string_value(val)) != json_string_length(val))
            rc = BAD("%s.%s: a value must not contain a NUL character", field, key);
        if (rc < 0)
            break;
        size_t vlen = json_string_length(val);
        total += key_len + 1 + vlen + 1;
        if (total > FB_MAX_ENV_BYTES) {
            rc = BAD("%s: the variables take more than the maximum of %d bytes", field, FB_MAX_ENV_BYTES);
            break;
        }
        char *kv = malloc(key_len + vlen + 2);
        if (kv) {
            memcpy(kv, key, key_len);
            kv[key_len] = '=';
            memcpy(kv + key_len + 1, json_string_value(val), vlen + 1);
        }
        if (strlist_push(&l, kv) < 0) {
            rc = OOM(field);
            break;
        }
    }
    if (rc < 0) {
        strlist_free((const char *const *)l.v);
        return -1;
    }
    p->env = (const char *const *)l.v;
    p->nenv = l.n;
    return 0;
}

/* ---- childProcess ---- */

static int parse_children(const json_t *v, const char *field, fb_permissions *p, fb_error *err)
{
    if (json_is_boolean(v)) {
        p->exec_any = json_is_true(v);
        return 0;
    }
    if (!json_is_array(v))
        return BAD("%s: must be false, true or a list of command names like [\"git\", \"sh\"], got %s", field,
                   fb_json_type_name(v));
    if (json_array_size(v) > FB_MAX_EXEC_ALLOW)
        return BAD("%s: %zu commands is more than the maximum of %d", field, json_array_size(v), FB_MAX_EXEC_ALLOW);
    strlist l = {0};
    size_t i;
    json_t *item;
    int rc = 0;
    json_array_foreach(v, i, item) {
        const char *s = json_string_value(item);
        size_t len = s ? json_string_length(item) : 0;
        if (!s)
            rc = BAD("%s[%zu]: must be a command name (a string), got %s", field, i, fb_json_type_name(item));
        else if (len == 0 || strlen(s) != len || len >= PATH_MAX || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
            rc = BAD("%s[%zu]: '%.64s' is not a command name", field, i, s);
        else if (strchr(s, '/') && s[0] != '/')
            rc = BAD("%s[%zu]: '%.64s': give a command name (looked up in /usr/bin, /bin) or an absolute path", field,
                     i, s);
        else if (strlist_push(&l, strdup(s)) < 0)
            rc = OOM(field);
        if (rc < 0)
            break;
    }
    if (rc < 0) {
        strlist_free((const char *const *)l.v);
        return -1;
    }
    p->exec_names = (const char *const *)l.v;
    p->nexec_names = l.n;
    return 0;
}

static bool is_executable_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

int fb_permissions_resolve(fb_permissions *p, const char *field, const char *const *search_dirs,
                           const char *visible_prefix, fb_error *err)
{
    if (!p->exec_names)
        return 0;
    size_t *index = calloc(p->nexec_names ? p->nexec_names : 1, sizeof *index);
    if (!index)
        return OOM(field);
    strlist l = {0};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < p->nexec_names; i++) {
        const char *name = p->exec_names[i];
        char cand[PATH_MAX], real[PATH_MAX];
        bool found = false;
        if (name[0] == '/') {
            found = snprintf(cand, sizeof cand, "%s", name) < (int)sizeof cand && access(cand, F_OK) == 0;
        } else {
            for (const char *const *d = search_dirs; *d && !found; d++)
                found = snprintf(cand, sizeof cand, "%s/%s", *d, name) < (int)sizeof cand && access(cand, F_OK) == 0;
        }
        if (!found) {
            char dirs[256] = "";
            for (const char *const *d = search_dirs; *d; d++)
                snprintf(dirs + strlen(dirs), sizeof dirs - strlen(dirs), "%s%s", d == search_dirs ? "" : ", ", *d);
            rc = name[0] == '/' ? BAD("%s[%zu]: command '%.200s' does not exist", field, i, name)
                                : BAD("%s[%zu]: command '%.64s' not found in %s", field, i, name, dirs);
            break;
        }
        if (!realpath(cand, real) || !is_executable_file(real)) {
            rc = BAD("%s[%zu]: '%.64s' (%.200s) is not an executable file", field, i, name, cand);
            break;
        }
        if (strncmp(real, visible_prefix, strlen(visible_prefix)) != 0) {
            rc = BAD("%s[%zu]: '%.64s' is %.200s, outside %s, which the sandbox does not see", field, i, name, real,
                     visible_prefix);
            break;
        }
        size_t j = 0;
        while (j < l.n && strcmp(l.v[j], real) != 0)
            j++;
        if (j == l.n && strlist_push(&l, strdup(real)) < 0) {
            rc = OOM(field);
            break;
        }
        index[i] = j;
    }
    if (rc < 0) {
        strlist_free((const char *const *)l.v);
        free(index);
        return -1;
    }
    strlist_free(p->exec_allow);
    free(p->exec_index);
    p->exec_allow = (const char *const *)l.v;
    p->nexec = l.n;
    p->exec_index = index;
    return 0;
}

/* ---- network ---- */

static bool valid_label_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

/* host: a DNS name (labels of a-z 0-9 - _, at most 63 bytes, not starting or ending with '-'), optionally
 * after "*."; or an IPv4 address; or [IPv6]. Lower-cased in place. Returns NULL or what is wrong. */
static const char *check_host(char *host, size_t len)
{
    if (len == 0)
        return "the host is empty";
    if (host[0] == '[') {
        if (host[len - 1] != ']' || len > INET6_ADDRSTRLEN + 2)
            return "an IPv6 address must be written [addr]";
        char addr[INET6_ADDRSTRLEN + 1];
        memcpy(addr, host + 1, len - 2);
        addr[len - 2] = '\0';
        unsigned char bin[16];
        return inet_pton(AF_INET6, addr, bin) == 1 ? NULL : "not a valid IPv6 address";
    }
    const char *name = host;
    if (strncmp(host, "*.", 2) == 0)
        name += 2;
    if (strchr(name, '*'))
        return "only a leading '*.' wildcard is allowed";
    size_t nlen = strlen(name);
    if (nlen == 0 || nlen > 253)
        return "a host name has 1 to 253 characters";
    if (strchr(name, ':'))
        return "an IPv6 address must be written [addr]";
    unsigned char bin[4];
    if (inet_pton(AF_INET, name, bin) == 1)
        return name == host ? NULL : "a wildcard needs a domain name, not an address";
    for (const char *label = name;;) {
        const char *dot = strchr(label, '.');
        size_t l = dot ? (size_t)(dot - label) : strlen(label);
        if (l == 0)
            return "empty label (two dots, or a leading or trailing dot)";
        if (l > 63)
            return "a label has at most 63 characters";
        if (label[0] == '-' || label[l - 1] == '-')
            return "a label must not start or end with '-'";
        for (size_t i = 0; i < l; i++)
            if (!valid_label_char(label[i]))
                return "a host name has only letters, digits, '-', '_' and dots";
        if (!dot)
            break;
        label = dot + 1;
    }
    return NULL;
}

static const char *check_destination(char *s, size_t len)
{
    char *colon = NULL;
    for (size_t i = 0; i < len; i++)
        if (s[i] >= 'A' && s[i] <= 'Z')
            s[i] = (char)(s[i] - 'A' + 'a');
    if (s[0] == '[') {
        char *close = strchr(s, ']');
        if (!close)
            return "an IPv6 address must be written [addr]";
        if (close[1] == ':')
            colon = close + 1;
        else if (close[1] != '\0')
            return "expected host[:port]";
    } else {
        colon = strrchr(s, ':');
        if (colon && memchr(s, ':', (size_t)(colon - s)))
            return "an IPv6 address must be written [addr]";
    }
    size_t hlen = colon ? (size_t)(colon - s) : len;
    if (colon) {
        const char *port = colon + 1;
        char *end;
        errno = 0;
        unsigned long v = strtoul(port, &end, 10);
        if (!*port || *end || errno || v < 1 || v > 65535 || port[0] == '0' || port[0] == '+' || port[0] == '-')
            return "the port must be a number from 1 to 65535";
        *colon = '\0';
    }
    const char *why = check_host(s, hlen);
    if (colon)
        *colon = ':';
    return why;
}

static int parse_network(const json_t *v, const char *field, fb_permissions *p, fb_error *err)
{
    if (json_is_boolean(v)) {
        p->network_all = json_is_true(v);
        return 0;
    }
    if (!json_is_array(v))
        return BAD("%s: must be false, true or a list of destinations like [\"api.example.com:443\", "
                   "\"*.example.org\"], got %s",
                   field, fb_json_type_name(v));
    if (json_array_size(v) > FB_MAX_NETWORK_ALLOW)
        return BAD("%s: %zu destinations is more than the maximum of %d", field, json_array_size(v),
                   FB_MAX_NETWORK_ALLOW);
    strlist l = {0};
    size_t i;
    json_t *item;
    int rc = 0;
    json_array_foreach(v, i, item) {
        const char *s = json_string_value(item);
        size_t len = s ? json_string_length(item) : 0;
        if (!s) {
            rc = BAD("%s[%zu]: must be a string \"host[:port]\", got %s", field, i, fb_json_type_name(item));
            break;
        }
        if (len > 300 || strlen(s) != len) {
            rc = BAD("%s[%zu]: not a destination \"host[:port]\"", field, i);
            break;
        }
        char *copy = strdup(s);
        if (!copy) {
            rc = OOM(field);
            break;
        }
        const char *why = check_destination(copy, len);
        if (why) {
            rc = BAD("%s[%zu]: '%.300s': %s (expected host[:port], '*.domain[:port]', an IPv4 address or "
                     "[IPv6])",
                     field, i, s, why);
            free(copy);
            break;
        }
        bool dup = false;
        for (size_t j = 0; j < l.n && !dup; j++)
            dup = strcmp(l.v[j], copy) == 0;
        if (dup) {
            free(copy);
        } else if (strlist_push(&l, copy) < 0) {
            rc = OOM(field);
            break;
        }
    }
    if (rc < 0) {
        strlist_free((const char *const *)l.v);
        return -1;
    }
    p->network_allow = (const char *const *)l.v;
    p->nnetwork = l.n;
    return 0;
}

/* ---- the whole value ---- */

static int parse_object(const json_t *v, const char *field, fb_permissions *out, fb_error *err)
{
    static const char *const known[] = {"preset", "env", "childProcess", "network", "fs"};
    char where[128];
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)v, key, val) {
        bool ok = false;
        for (size_t i = 0; i < sizeof known / sizeof *known; i++)
            ok |= strcmp(key, known[i]) == 0;
        if (!ok)
            return BAD("%s.%.64s: unknown field (expected preset, env, childProcess, network)", field, key);
    }
    json_t *fs = json_object_get(v, "fs");
    if (fs)
        return BAD("%s.fs: host files are reached only through `mount`, whose `permissions` rules decide per path "
                   "and operation (the sandbox's own workspace and /tmp are always writable); use "
                   "mount.permissions, or the allowAllFs preset for mounts that allow every operation",
                   field);
    json_t *preset = json_object_get(v, "preset");
    snprintf(where, sizeof where, "%s.preset", field);
    if (preset && !json_is_null(preset) && parse_presets(preset, where, &out->presets, err) < 0)
        return -1;
    json_t *env = json_object_get(v, "env");
    snprintf(where, sizeof where, "%s.env", field);
    if (env && !json_is_null(env) && parse_env(env, where, (out->presets & FB_PRESET_ENV) != 0, out, err) < 0)
        return -1;
    json_t *child = json_object_get(v, "childProcess");
    snprintf(where, sizeof where, "%s.childProcess", field);
    if (child && !json_is_null(child)) {
        if (parse_children(child, where, out, err) < 0)
            return -1;
    } else {
        out->exec_any = (out->presets & FB_PRESET_CHILD) != 0;
    }
    json_t *net = json_object_get(v, "network");
    snprintf(where, sizeof where, "%s.network", field);
    if (net && !json_is_null(net)) {
        if (parse_network(net, where, out, err) < 0)
            return -1;
    } else {
        out->network_all = (out->presets & FB_PRESET_NETWORK) != 0;
    }
    out->fs_all = (out->presets & FB_PRESET_FS) != 0;
    return 0;
}

int fb_permissions_parse(const json_t *v, const char *field, fb_permissions *out, fb_error *err)
{
    memset(out, 0, sizeof *out);
    if (!v || json_is_null(v))
        return 0;
    int rc;
    if (json_is_object(v)) {
        rc = parse_object(v, field, out, err);
    } else if (json_is_string(v) || json_is_array(v)) {
        rc = parse_presets(v, field, &out->presets, err);
        out->exec_any = (out->presets & FB_PRESET_CHILD) != 0;
        out->network_all = (out->presets & FB_PRESET_NETWORK) != 0;
        out->fs_all = (out->presets & FB_PRESET_FS) != 0;
    } else {
        rc = BAD("%s: must be an object {env, childProcess, network, preset}, a preset name (%s) or a list of "
                 "them, got %s",
                 field, fb_permissions_presets(), fb_json_type_name(v));
    }
    if (rc < 0)
        fb_permissions_free(out);
    return rc;
}

void fb_permissions_free(fb_permissions *p)
{
    strlist_free(p->env);
    strlist_free(p->exec_names);
    strlist_free(p->exec_allow);
    free(p->exec_index);
    strlist_free(p->network_allow);
    memset(p, 0, sizeof *p);
}
