/* Decoding the request's `mount` object into fs/mount.h's plain config (request/mount.h). Every rejection
 * is an "InvalidRequest" whose message starts with the JSON path of the field, e.g.
 * `mount.dirs["/data"]: host directory ./nope does not exist`. */
#include "request/mount.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "request/rules.h"
#include "util/json.h"

#define BAD(...) fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, __VA_ARGS__)
#define OOM(what) fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "%s: out of memory", what)

/* The sandbox's own directories (rootfs.c binds them read-only, /.fnbox holds the harness): a mount
 * there would hide or replace them. */
static const char *const k_system_dirs[] = {"/usr", "/etc", "/proc", "/dev", "/sys", "/bin", "/lib",
                                            "/lib32", "/lib64", "/libx32", "/sbin", "/.fnbox"};

static const char *const k_mount_fields[] = {"dirs", "permissions", "loading", "sync", "security",
                                             "onPermissionDenied"};
static const char *const k_loading_fields[] = {"mode", "include", "maxFileSize", "maxTotalSize"};
static const char *const k_sync_fields[] = {"mode", "onError", "onFunctionError"};
static const char *const k_security_fields[] = {"followSymlinks"};

#define COUNT(a) (sizeof(a) / sizeof *(a))

/* Refuses fields not in list, naming the first unknown one and the known ones. */
static int check_known(const json_t *obj, const char *where, const char *const *list, size_t n, fb_error *err)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)obj, key, v) {
        bool known = false;
        for (size_t i = 0; i < n && !known; i++)
            known = strcmp(key, list[i]) == 0;
        if (!known) {
            char expected[256] = "";
            size_t off = 0;
            for (size_t i = 0; i < n && off < sizeof expected; i++) {
                int w = snprintf(expected + off, sizeof expected - off, "%s%s", i ? ", " : "", list[i]);
                off += w > 0 ? (size_t)w : 0;
            }
            return BAD("%s.%s: unknown field (expected one of: %s)", where, key, expected);
        }
    }
    return 0;
}

static int object_field(const json_t *parent, const char *name, const char *where, json_t **out, fb_error *err)
{
    *out = json_object_get(parent, name);
    if (*out && !json_is_object(*out))
        return BAD("%s.%s: must be an object, got %s", where, name, fb_json_type_name(*out));
    return 0;
}

/* A string field whose value must be one of names[]; *out gets its index. Absent: *out untouched. */
static int enum_field(const json_t *obj, const char *name, const char *where, const char *const *names, size_t n,
                      int *out, fb_error *err)
{
    json_t *v = json_object_get(obj, name);
    if (!v)
        return 0;
    char expected[160] = "";
    size_t off = 0;
    for (size_t i = 0; i < n && off < sizeof expected; i++) {
        int w = snprintf(expected + off, sizeof expected - off, "%s\"%s\"", i ? ", " : "", names[i]);
        off += w > 0 ? (size_t)w : 0;
    }
    if (!json_is_string(v) || fb_json_bignum(v))
        return BAD("%s.%s: must be one of %s, got %s", where, name, expected, fb_json_type_name(v));
    for (size_t i = 0; i < n; i++)
        if (strcmp(json_string_value(v), names[i]) == 0) {
            *out = (int)i;
            return 0;
        }
    return BAD("%s.%s: must be one of %s, got \"%.64s\"", where, name, expected, json_string_value(v));
}

static int size_field(const json_t *obj, const char *name, const char *where, uint64_t *out, fb_error *err)
{
    json_t *v = json_object_get(obj, name);
    if (!v)
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) <= 0)
        return BAD("%s.%s: must be a positive integer number of bytes (at most 2^63-1), got %s", where, name,
                   json_is_integer(v)   ? "a number below 1"
                   : fb_json_bignum(v) ? "a number too large"
                                       : fb_json_type_name(v));
    *out = (uint64_t)json_integer_value(v);
    return 0;
}

/* ---- virtual paths ---- */

/* Absolute, normalized ("/a/b": no empty, "." or ".." segment, no trailing slash), not "/". */
static int check_virtual(const char *vp, size_t len, const char *where, fb_error *err)
{
    if (strlen(vp) != len)
        return BAD("%s: virtual path contains a NUL character", where);
    if (len == 0 || vp[0] != '/')
        return BAD("%s: virtual path must be absolute (start with '/')", where);
    if (len == 1)
        return BAD("%s: the root '/' cannot be a mount point", where);
    if (len >= PATH_MAX)
        return BAD("%s: virtual path is %zu bytes long (at most %d)", where, len, PATH_MAX - 1);
    for (const char *p = vp + 1;;) {
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        if (n == 0)
            return BAD("%s: virtual path must be normalized (no empty segment or trailing '/')", where);
        if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
            return BAD("%s: virtual path must be normalized (no '.' or '..' segment)", where);
        if (n > NAME_MAX)
            return BAD("%s: virtual path has a segment of %zu bytes (at most %d)", where, n, NAME_MAX);
        if (!slash)
            break;
        p = slash + 1;
    }
    return 0;
}

/* True if b is a or lies under it, component-wise: "/data" contains "/data/x" but not "/database". */
static bool path_within(const char *a, const char *b)
{
    size_t n = strlen(a);
    return strncmp(a, b, n) == 0 && (b[n] == '\0' || b[n] == '/');
}

static int cmp_dirs(const void *x, const void *y)
{
    return strcmp(((const fb_mount_dir *)x)->virtual_path, ((const fb_mount_dir *)y)->virtual_path);
}

static int parse_dirs(const json_t *dirs, const char *field, fb_mount_config *out, fb_error *err)
{
    if (!dirs)
        return BAD("%s.dirs: required (an object mapping virtual paths to host directories)", field);
    if (!json_is_object(dirs))
        return BAD("%s.dirs: must be an object mapping virtual paths to host directories, got %s", field,
                   fb_json_type_name(dirs));
    size_t n = json_object_size(dirs);
    if (n == 0)
        return BAD("%s.dirs: must map at least one virtual path to a host directory", field);
    out->dirs = calloc(n, sizeof *out->dirs);
    if (!out->dirs)
        return OOM("mount.dirs");
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)dirs, key, v) {
        char where[PATH_MAX + 64];
        snprintf(where, sizeof where, "%s.dirs[\"%.*s\"]", field, 200, key);
        if (check_virtual(key, json_object_iter_key_len(json_object_key_to_iter(key)), where, err) < 0)
            return -1;
        for (size_t i = 0; i < COUNT(k_system_dirs); i++)
            if (path_within(k_system_dirs[i], key))
                return BAD("%s: %s is a system directory of the sandbox; mount elsewhere", where, k_system_dirs[i]);
        if (!json_is_string(v) || fb_json_bignum(v))
            return BAD("%s: host directory must be a string, got %s", where, fb_json_type_name(v));
        const char *host = json_string_value(v);
        if (strlen(host) != json_string_length(v))
            return BAD("%s: host directory contains a NUL character", where);
        if (!*host)
            return BAD("%s: host directory must not be empty", where);
        char *real = realpath(host, NULL);
        if (!real) {
            int e = errno;
            if (e == ENOENT)
                return BAD("%s: host directory %s does not exist", where, host);
            if (e == ENOMEM)
                return OOM(where);
            return BAD("%s: host directory %s: %s", where, host, strerror(e));
        }
        struct stat st;
        if (stat(real, &st) < 0 || !S_ISDIR(st.st_mode)) {
            free(real);
            return BAD("%s: host path %s is not a directory", where, host);
        }
        fb_mount_dir *d = &out->dirs[out->ndirs++];
        d->host_path = real;
        d->virtual_path = strdup(key);
        if (!d->virtual_path)
            return OOM(where);
    }
    qsort(out->dirs, out->ndirs, sizeof *out->dirs, cmp_dirs);
    /* Sorted, a nested pair is adjacent except when siblings sort between them ("/a", "/a-b", "/a/c"),
     * so compare every pair: n is small. */
    for (size_t i = 0; i < out->ndirs; i++)
        for (size_t j = i + 1; j < out->ndirs; j++)
            if (path_within(out->dirs[i].virtual_path, out->dirs[j].virtual_path))
                return BAD("%s.dirs[\"%.200s\"]: nested inside the mount %s (mount points must not overlap)", field,
                           out->dirs[j].virtual_path, out->dirs[i].virtual_path);
    return 0;
}

/* ---- the optional sections ---- */

static int parse_loading(const json_t *loading, const char *field, fb_mount_config *out, fb_error *err)
{
    char where[128];
    snprintf(where, sizeof where, "%s.loading", field);
    if (check_known(loading, where, k_loading_fields, COUNT(k_loading_fields), err) < 0)
        return -1;
    static const char *const modes[] = {"eager", "lazy", "explicit"};
    int mode = (int)out->load;
    if (enum_field(loading, "mode", where, modes, COUNT(modes), &mode, err) < 0)
        return -1;
    out->load = (fb_load_mode)mode;
    json_t *inc = json_object_get(loading, "include");
    if (inc) {
        if (out->load != FB_LOAD_EXPLICIT)
            return BAD("%s.include: only used with mode \"explicit\" (mode is \"%s\")", where, modes[mode]);
        if (!json_is_array(inc))
            return BAD("%s.include: must be an array of glob patterns, got %s", where, fb_json_type_name(inc));
        out->include = calloc(json_array_size(inc) + 1, sizeof *out->include);
        if (!out->include)
            return OOM(where);
        size_t i;
        json_t *p;
        json_array_foreach(inc, i, p) {
            if (!json_is_string(p) || fb_json_bignum(p))
                return BAD("%s.include[%zu]: must be a glob pattern string, got %s", where, i, fb_json_type_name(p));
            if (json_string_length(p) == 0 || strlen(json_string_value(p)) != json_string_length(p))
                return BAD("%s.include[%zu]: must be a non-empty pattern without NUL characters", where, i);
            out->include[out->ninclude] = strdup(json_string_value(p));
            if (!out->include[out->ninclude])
                return OOM(where);
            out->ninclude++;
        }
    } else if (out->load == FB_LOAD_EXPLICIT) {
        return BAD("%s.include: required when mode is \"explicit\" (the patterns of the files to show)", where);
    }
    if (size_field(loading, "maxFileSize", where, &out->max_file_size, err) < 0 ||
        size_field(loading, "maxTotalSize", where, &out->max_total_size, err) < 0)
        return -1;
    return 0;
}

static int parse_sync(const json_t *sync, const char *field, fb_mount_config *out, fb_error *err)
{
    char where[128];
    snprintf(where, sizeof where, "%s.sync", field);
    if (check_known(sync, where, k_sync_fields, COUNT(k_sync_fields), err) < 0)
        return -1;
    static const char *const modes[] = {"batch", "manual"};
    static const char *const on_error[] = {"rollback", "continue", "abort"};
    static const char *const on_fn_error[] = {"skip", "sync"};
    int mode = (int)out->sync, oe = (int)out->on_error, ofe = out->sync_on_function_error;
    if (enum_field(sync, "mode", where, modes, COUNT(modes), &mode, err) < 0 ||
        enum_field(sync, "onError", where, on_error, COUNT(on_error), &oe, err) < 0 ||
        enum_field(sync, "onFunctionError", where, on_fn_error, COUNT(on_fn_error), &ofe, err) < 0)
        return -1;
    out->sync = (fb_sync_mode)mode;
    out->on_error = (fb_sync_on_error)oe;
    out->sync_on_function_error = ofe == 1;
    return 0;
}

static int parse_security(const json_t *sec, const char *field, fb_mount_config *out, fb_error *err)
{
    char where[128];
    snprintf(where, sizeof where, "%s.security", field);
    if (check_known(sec, where, k_security_fields, COUNT(k_security_fields), err) < 0)
        return -1;
    json_t *f = json_object_get(sec, "followSymlinks");
    if (!f)
        return 0;
    if (json_is_boolean(f))
        out->symlinks = json_is_true(f) ? FB_SYMLINKS_YES : FB_SYMLINKS_NO;
    else if (json_is_string(f) && !fb_json_bignum(f) && strcmp(json_string_value(f), "restricted") == 0)
        out->symlinks = FB_SYMLINKS_RESTRICTED;
    else if (json_is_string(f) && !fb_json_bignum(f))
        return BAD("%s.followSymlinks: must be true, false or \"restricted\", got \"%.64s\"", where,
                   json_string_value(f));
    else
        return BAD("%s.followSymlinks: must be true, false or \"restricted\", got %s", where, fb_json_type_name(f));
    return 0;
}

/* The permissions a mount without its own stands for when the caller already chose what may change. */
static json_t *allow_all_permissions(void)
{
    return json_pack("{s:{s:b, s:b, s:b, s:b, s:b}}", "default", "read", 1, "list", 1, "create", 1, "modify", 1,
                     "delete", 1);
}

int fb_mount_config_parse(const json_t *mount, const char *field, fb_mount_config *out, fb_error *err)
{
    return fb_mount_config_parse_ex(mount, field, false, out, err);
}

int fb_mount_config_parse_ex(const json_t *mount, const char *field, bool absent_allows_all, fb_mount_config *out,
                             fb_error *err)
{
    /* No sync section, or one without a mode, is manual: like the seed, fnbox writes to the host only when
     * the request asks for it with sync.mode "batch" (issue 11). */
    *out = (fb_mount_config){.load = FB_LOAD_LAZY, .sync = FB_SYNC_MANUAL, .on_error = FB_ON_ERROR_ROLLBACK,
                             .symlinks = FB_SYMLINKS_NO, .on_denied = FB_DENIED_THROW};
    if (!field)
        field = "mount";
    if (!mount || !json_is_object(mount)) {
        BAD("%s: must be an object ({\"dirs\": {virtualPath: hostPath}, ...}), got %s", field,
            mount ? fb_json_type_name(mount) : "nothing");
        return -1;
    }
    json_t *perm, *loading, *sync, *sec, *all = NULL;
    char pfield[128];
    snprintf(pfield, sizeof pfield, "%s.permissions", field);
    static const char *const denied[] = {"throw", "ignore", "virtual"};
    int od = (int)out->on_denied;
    /* Without permissions, a mount that is not batch-synced allows every operation inside the call: its
     * changes stay in the sandbox and are only reported, as in the seed's manual-sync example; the host
     * changes only when the caller applies a selection (fnbox sync). A batch mount keeps read and list. */
    if (check_known(mount, field, k_mount_fields, COUNT(k_mount_fields), err) < 0 ||
        parse_dirs(json_object_get(mount, "dirs"), field, out, err) < 0 ||
        object_field(mount, "sync", field, &sync, err) < 0 || (sync && parse_sync(sync, field, out, err) < 0) ||
        object_field(mount, "permissions", field, &perm, err) < 0 ||
        (!perm && (absent_allows_all || out->sync != FB_SYNC_BATCH) && !(perm = all = allow_all_permissions()) &&
         OOM(pfield) < 0) ||
        object_field(mount, "loading", field, &loading, err) < 0 ||
        object_field(mount, "security", field, &sec, err) < 0 ||
        (loading && parse_loading(loading, field, out, err) < 0) ||
        (sec && parse_security(sec, field, out, err) < 0) ||
        enum_field(mount, "onPermissionDenied", field, denied, COUNT(denied), &od, err) < 0 ||
        /* No permissions: the rule engine's defaults (read and list only), or everything (above). */
        fb_rules_parse(perm, pfield, &out->rules, err) < 0) {
        json_decref(all);
        fb_mount_config_free(out);
        return -1;
    }
    json_decref(all);
    out->on_denied = (fb_on_denied)od;
    return 0;
}
