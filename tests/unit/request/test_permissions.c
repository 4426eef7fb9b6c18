/* `permissions` decoding (request/permissions.h): a table of valid values with what they must decode to, a
 * table of invalid ones with the field the InvalidRequest message must start with, the reserved-key list,
 * preset composition, and command resolution against a scratch directory of our own.
 * Table JSON is written with ' for " (q() swaps them). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "request/permissions.h"
#include "fnbox.h"

static char *q(const char *s)
{
    size_t n = strlen(s);
    char *out = malloc(n + 1);
    assert_non_null(out);
    for (size_t i = 0; i <= n; i++)
        out[i] = s[i] == '\'' ? '"' : s[i];
    return out;
}

static json_t *load(const char *qtext)
{
    char *t = q(qtext);
    json_error_t e;
    json_t *v = json_loads(t, JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);
    if (!v)
        fail_msg("bad JSON in test table: %s: %s", t, e.text);
    free(t);
    return v;
}

static bool is_zeroed(const fb_permissions *p)
{
    static const fb_permissions zero;
    return memcmp(p, &zero, sizeof zero) == 0;
}

/* "A|B|C" for a NULL-terminated list ("" for none). */
static void join(const char *const *v, char *out, size_t cap)
{
    out[0] = '\0';
    for (const char *const *p = v; p && *p; p++)
        snprintf(out + strlen(out), cap - strlen(out), "%s%s", p == v ? "" : "|", *p);
}

/* ---- valid values ---- */

typedef struct valid_case {
    const char *label;
    const char *json;       /* the permissions value (' for ") */
    unsigned presets;
    const char *env;        /* "A=1|B=2" */
    bool exec_any;
    const char *exec;       /* command names "git|sh" */
    bool network_all;
    const char *network;    /* "a.com:443|*.b.org" */
    bool fs_all;
} valid_case;

static const valid_case valid_cases[] = {
    {"null: everything denied", "null", .presets = 0},
    {"empty object: everything denied", "{}", .presets = 0},
    {"explicit denials", "{'env':{},'childProcess':false,'network':false}", .presets = 0},
    {"null fields are absent", "{'env':null,'childProcess':null,'network':null,'preset':null}", .presets = 0},
    /* env */
    {"env variables in order", "{'env':{'B':'2','A':'1','EMPTY':''}}", .env = "B=2|A=1|EMPTY="},
    {"env value with '=' and spaces", "{'env':{'X':'a=b c'}}", .env = "X=a=b c"},
    {"env LANG, TZ and LC_ALL are not reserved", "{'env':{'LANG':'de_DE.UTF-8','TZ':'UTC','LC_ALL':'C'}}",
     .env = "LANG=de_DE.UTF-8|TZ=UTC|LC_ALL=C"},
    {"env unicode", "{'env':{'K\\u00e9':'v\\u20ac'}}", .env = "K\xC3\xA9=v\xE2\x82\xAC"},
    {"env reserved keys under allowAllEnv", "{'preset':'allowAllEnv','env':{'LD_PRELOAD':'/tmp/x.so','PATH':'/x'}}",
     .presets = FB_PRESET_ENV, .env = "LD_PRELOAD=/tmp/x.so|PATH=/x"},
    {"env reserved keys under allowAll", "{'preset':['allowAll'],'env':{'NODE_OPTIONS':'--x'}}",
     .presets = FB_PRESET_ALL, .env = "NODE_OPTIONS=--x", .exec_any = true, .network_all = true, .fs_all = true},
    /* childProcess */
    {"childProcess true", "{'childProcess':true}", .exec_any = true},
    {"childProcess list", "{'childProcess':['git','sh']}", .exec = "git|sh"},
    {"childProcess empty list", "{'childProcess':[]}", .presets = 0},
    {"childProcess absolute path", "{'childProcess':['/usr/bin/env']}", .exec = "/usr/bin/env"},
    /* network */
    {"network true", "{'network':true}", .network_all = true},
    {"network list", "{'network':['api.example.com:443','*.example.org','10.0.0.1:8080','[::1]:80','[2001:db8::1]']}",
     .network = "api.example.com:443|*.example.org|10.0.0.1:8080|[::1]:80|[2001:db8::1]"},
    {"network lower-cased and deduplicated", "{'network':['API.Example.COM','api.example.com','[FE80::1]']}",
     .network = "api.example.com|[fe80::1]"},
    {"network underscores and digits", "{'network':['_dmarc.x-1.example','123.example:65535']}",
     .network = "_dmarc.x-1.example|123.example:65535"},
    {"network single label", "{'network':['localhost:1']}", .network = "localhost:1"},
    /* presets */
    {"preset string form", "'allowAll'", .presets = FB_PRESET_ALL, .exec_any = true, .network_all = true,
     .fs_all = true},
    {"preset list form", "['allowAllNetwork','allowAllChildProcess']", .presets = FB_PRESET_NETWORK | FB_PRESET_CHILD,
     .exec_any = true, .network_all = true},
    {"preset empty list", "[]", .presets = 0},
    {"preset allowAllFs", "'allowAllFs'", .presets = FB_PRESET_FS, .fs_all = true},
    {"preset allowAllEnv alone grants no variable", "'allowAllEnv'", .presets = FB_PRESET_ENV},
    {"preset inside the object", "{'preset':'allowAllNetwork'}", .presets = FB_PRESET_NETWORK, .network_all = true},
    {"preset repeated", "{'preset':['allowAllFs','allowAllFs']}", .presets = FB_PRESET_FS, .fs_all = true},
    {"explicit network overrides allowAll", "{'preset':'allowAll','network':false}", .presets = FB_PRESET_ALL,
     .exec_any = true, .fs_all = true},
    {"explicit list overrides allowAllNetwork", "{'preset':'allowAllNetwork','network':['a.b:1']}",
     .presets = FB_PRESET_NETWORK, .network = "a.b:1"},
    {"explicit childProcess overrides allowAll", "{'preset':'allowAll','childProcess':['sh']}",
     .presets = FB_PRESET_ALL, .exec = "sh", .network_all = true, .fs_all = true},
    {"null field keeps the preset", "{'preset':'allowAll','childProcess':null}", .presets = FB_PRESET_ALL,
     .exec_any = true, .network_all = true, .fs_all = true},
};

static bool check_valid(const valid_case *c, const fb_permissions *p, char *why, size_t n)
{
    char got[1024];
    if (p->presets != c->presets) {
        snprintf(why, n, "presets: want %#x got %#x", c->presets, p->presets);
        return false;
    }
    join(p->env, got, sizeof got);
    size_t want_n = 0;
    for (const char *e = c->env; e && *e; e = strchr(e, '|') ? strchr(e, '|') + 1 : "")
        want_n++;
    if (strcmp(got, c->env ? c->env : "") != 0 || p->nenv != want_n || (p->env && p->env[p->nenv])) {
        snprintf(why, n, "env: want '%s' (%zu) got '%s' (%zu)", c->env ? c->env : "", want_n, got, p->nenv);
        return false;
    }
    if (p->exec_any != c->exec_any) {
        snprintf(why, n, "exec_any: want %d", c->exec_any);
        return false;
    }
    join(p->exec_names, got, sizeof got);
    if (strcmp(got, c->exec ? c->exec : "") != 0) {
        snprintf(why, n, "childProcess: want '%s' got '%s'", c->exec ? c->exec : "", got);
        return false;
    }
    if (p->network_all != c->network_all) {
        snprintf(why, n, "network_all: want %d", c->network_all);
        return false;
    }
    join(p->network_allow, got, sizeof got);
    if (strcmp(got, c->network ? c->network : "") != 0) {
        snprintf(why, n, "network: want '%s' got '%s'", c->network ? c->network : "", got);
        return false;
    }
    if (p->fs_all != c->fs_all) {
        snprintf(why, n, "fs_all: want %d", c->fs_all);
        return false;
    }
    return true;
}

static void test_valid_table(void **state)
{
    (void)state;
    int failed = 0;
    for (size_t i = 0; i < sizeof valid_cases / sizeof *valid_cases; i++) {
        const valid_case *c = &valid_cases[i];
        json_t *v = load(c->json);
        fb_permissions p;
        memset(&p, 0xA5, sizeof p);
        fb_error err = {0};
        char why[1200] = "";
        bool ok;
        if (fb_permissions_parse(v, "permissions", &p, &err) != 0) {
            snprintf(why, sizeof why, "want success, got %s [%.1000s]", fb_error_type(&err), err.message);
            ok = false;
        } else {
            ok = check_valid(c, &p, why, sizeof why);
        }
        fb_permissions_free(&p);
        if (ok && !is_zeroed(&p)) {
            snprintf(why, sizeof why, "fb_permissions_free did not reset the struct");
            ok = false;
        }
        if (!ok) {
            print_message("# FAIL %s: %s\n", c->label, why);
            failed++;
        }
        json_decref(v);
    }
    if (failed)
        fail_msg("%d valid case(s) failed", failed);
}

/* An absent value (NULL) is everything denied, like null. */
static void test_absent(void **state)
{
    (void)state;
    fb_permissions p;
    memset(&p, 0xA5, sizeof p);
    fb_error err = {0};
    assert_int_equal(fb_permissions_parse(NULL, "permissions", &p, &err), 0);
    assert_true(is_zeroed(&p));
    fb_permissions_free(&p);
}

/* ---- invalid values ---- */

typedef struct invalid_case {
    const char *label;
    const char *json;
    const char *field;  /* the message starts with "<field>:" */
    const char *also;   /* and contains this */
} invalid_case;

#define N70 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

static const invalid_case invalid_cases[] = {
    /* the value */
    {"number", "5", "permissions", "must be an object"},
    {"boolean", "true", "permissions", "must be an object"},
    {"unknown preset", "'allowEverything'", "permissions", "unknown preset 'allowEverything'"},
    {"preset wrong case", "'allowall'", "permissions", "unknown preset"},
    {"preset list with a number", "['allowAll',1]", "permissions[1]", "must be a preset name"},
    {"preset list with an unknown name", "['allowAllFs','nope']", "permissions[1]", "unknown preset 'nope'"},
    {"unknown field", "{'envs':{}}", "permissions.envs", "unknown field"},
    {"fs switch refused", "{'fs':true}", "permissions.fs", "mount.permissions"},
    {"fs false refused too", "{'fs':false}", "permissions.fs", "mount"},
    {"preset object", "{'preset':{}}", "permissions.preset", "must be a preset name"},
    {"preset unknown inside the object", "{'preset':['allowAll','x']}", "permissions.preset[1]", "unknown preset"},
    /* env */
    {"env true (never fnbox's environment)", "{'env':true}", "permissions.env", "never passes its own environment"},
    {"env list", "{'env':['A']}", "permissions.env", "must be an object"},
    {"env empty name", "{'env':{'':'x'}}", "permissions.env", "must not be empty"},
    {"env name with '='", "{'env':{'A=B':'x'}}", "permissions.env.A=B", "'='"},
    /* a NUL in a key never gets this far: jansson refuses it while parsing the request */
    {"env value with NUL", "{'env':{'A':'x\\u0000y'}}", "permissions.env.A", "NUL"},
    {"env value number", "{'env':{'A':1}}", "permissions.env.A", "must be a string, got number"},
    {"env value null", "{'env':{'A':null}}", "permissions.env.A", "must be a string, got null"},
    {"env name too long", "{'env':{'" N70 N70 N70 N70 "':'x'}}", "permissions.env", "at most 256 bytes"},
    {"env LD_PRELOAD reserved", "{'env':{'LD_PRELOAD':'/x.so'}}", "permissions.env.LD_PRELOAD", "allowAllEnv"},
    {"env LD_LIBRARY_PATH reserved", "{'env':{'LD_LIBRARY_PATH':'/x'}}", "permissions.env.LD_LIBRARY_PATH",
     "reserved"},
    {"env any LD_ reserved", "{'env':{'LD_AUDIT':'/x'}}", "permissions.env.LD_AUDIT", "reserved"},
    {"env PATH reserved", "{'env':{'PATH':'/x'}}", "permissions.env.PATH", "reserved"},
    {"env HOME reserved", "{'env':{'HOME':'/x'}}", "permissions.env.HOME", "reserved"},
    {"env NODE_OPTIONS reserved", "{'env':{'NODE_OPTIONS':'--require /x'}}", "permissions.env.NODE_OPTIONS",
     "reserved"},
    {"env PYTHONPATH reserved", "{'env':{'PYTHONPATH':'/x'}}", "permissions.env.PYTHONPATH", "reserved"},
    {"env RUBYOPT reserved", "{'env':{'RUBYOPT':'-rx'}}", "permissions.env.RUBYOPT", "reserved"},
    {"env PHPRC reserved", "{'env':{'PHPRC':'/x'}}", "permissions.env.PHPRC", "reserved"},
    {"env GLIBC_TUNABLES reserved", "{'env':{'GLIBC_TUNABLES':'x'}}", "permissions.env.GLIBC_TUNABLES", "reserved"},
    {"env reserved even with other presets", "{'preset':['allowAllNetwork','allowAllFs'],'env':{'LD_PRELOAD':'x'}}",
     "permissions.env.LD_PRELOAD", "reserved"},
    /* childProcess */
    {"childProcess string", "{'childProcess':'git'}", "permissions.childProcess", "must be false, true or a list"},
    {"childProcess number", "{'childProcess':1}", "permissions.childProcess", "got number"},
    {"childProcess item number", "{'childProcess':['git',2]}", "permissions.childProcess[1]", "must be a command"},
    {"childProcess empty name", "{'childProcess':['']}", "permissions.childProcess[0]", "not a command name"},
    {"childProcess dot", "{'childProcess':['..']}", "permissions.childProcess[0]", "not a command name"},
    {"childProcess relative path", "{'childProcess':['bin/sh']}", "permissions.childProcess[0]", "absolute path"},
    {"childProcess NUL", "{'childProcess':['s\\u0000h']}", "permissions.childProcess[0]", "not a command name"},
    /* network */
    {"network string", "{'network':'a.com'}", "permissions.network", "must be false, true or a list"},
    {"network item number", "{'network':[443]}", "permissions.network[0]", "must be a string"},
    {"network bare wildcard", "{'network':['*']}", "permissions.network[0]", "wildcard"},
    {"network inner wildcard", "{'network':['api.*.com']}", "permissions.network[0]", "leading '*.'"},
    {"network suffix wildcard", "{'network':['api.example.*']}", "permissions.network[0]", "wildcard"},
    {"network double wildcard", "{'network':['*.*.example.org']}", "permissions.network[0]", "wildcard"},
    {"network wildcard on an address", "{'network':['*.10.0.0.1']}", "permissions.network[0]", "domain name"},
    {"network port 0", "{'network':['a.com:0']}", "permissions.network[0]", "port"},
    {"network port too big", "{'network':['a.com:65536']}", "permissions.network[0]", "port"},
    {"network port not a number", "{'network':['a.com:https']}", "permissions.network[0]", "port"},
    {"network empty port", "{'network':['a.com:']}", "permissions.network[0]", "port"},
    {"network leading-zero port", "{'network':['a.com:0443']}", "permissions.network[0]", "port"},
    {"network empty host", "{'network':[':443']}", "permissions.network[0]", "empty"},
    {"network empty", "{'network':['']}", "permissions.network[0]", "empty"},
    {"network URL", "{'network':['https://a.com']}", "permissions.network[0]", ""},
    {"network path", "{'network':['a.com/x']}", "permissions.network[0]", "letters, digits"},
    {"network double dot", "{'network':['a..com']}", "permissions.network[0]", "empty label"},
    {"network trailing dot", "{'network':['a.com.']}", "permissions.network[0]", "empty label"},
    {"network label with leading '-'", "{'network':['-a.com']}", "permissions.network[0]", "'-'"},
    {"network label too long", "{'network':['" N70 ".com']}", "permissions.network[0]", "63"},
    {"network bare IPv6", "{'network':['::1']}", "permissions.network[0]", "[addr]"},
    {"network bad IPv6", "{'network':['[::g]:80']}", "permissions.network[0]", "IPv6"},
    {"network unclosed IPv6", "{'network':['[::1:80']}", "permissions.network[0]", "[addr]"},
    {"network junk after IPv6", "{'network':['[::1]x']}", "permissions.network[0]", "host[:port]"},
    {"network space", "{'network':['a b.com']}", "permissions.network[0]", "letters, digits"},
    {"network NUL", "{'network':['a\\u0000.com']}", "permissions.network[0]", "not a destination"},
    {"network second item named", "{'network':['ok.com','bad..com']}", "permissions.network[1]", "empty label"},
};

static void test_invalid_table(void **state)
{
    (void)state;
    int failed = 0;
    for (size_t i = 0; i < sizeof invalid_cases / sizeof *invalid_cases; i++) {
        const invalid_case *c = &invalid_cases[i];
        json_t *v = load(c->json);
        fb_permissions p;
        memset(&p, 0xA5, sizeof p);
        fb_error err = {0};
        int rc = fb_permissions_parse(v, "permissions", &p, &err);
        size_t fl = strlen(c->field);
        char why[2400] = "";
        if (rc != -1)
            snprintf(why, sizeof why, "accepted");
        else if (strcmp(fb_error_type(&err), "InvalidRequest") != 0)
            snprintf(why, sizeof why, "type %s [%s]", fb_error_type(&err), err.message);
        else if (strncmp(err.message, c->field, fl) != 0 || (err.message[fl] != ':' && err.message[fl] != '.' &&
                                                              err.message[fl] != '['))
            snprintf(why, sizeof why, "message should start with '%s': [%s]", c->field, err.message);
        else if (!strstr(err.message, c->also))
            snprintf(why, sizeof why, "message should contain '%s': [%s]", c->also, err.message);
        else if (!is_zeroed(&p))
            snprintf(why, sizeof why, "struct not reset after a failure");
        if (why[0]) {
            print_message("# FAIL %s: %s\n", c->label, why);
            failed++;
        }
        fb_permissions_free(&p);
        json_decref(v);
    }
    if (failed)
        fail_msg("%d invalid case(s) failed", failed);
}

/* Too many entries are refused by count, naming the field. */
static void test_counts(void **state)
{
    (void)state;
    json_t *env = json_object(), *cmds = json_array(), *net = json_array();
    for (int i = 0; i < 300; i++) {
        char k[16];
        snprintf(k, sizeof k, "V%d", i);
        json_object_set_new(env, k, json_string("x"));
        json_array_append_new(cmds, json_string("sh"));
        json_array_append_new(net, json_string("a.com"));
    }
    const char *fields[] = {"env", "childProcess", "network"};
    json_t *values[] = {env, cmds, net};
    for (int i = 0; i < 3; i++) {
        json_t *v = json_pack("{s:O}", fields[i], values[i]);
        fb_permissions p;
        fb_error err = {0};
        assert_int_equal(fb_permissions_parse(v, "permissions", &p, &err), -1);
        char want[64];
        snprintf(want, sizeof want, "permissions.%s:", fields[i]);
        assert_int_equal(strncmp(err.message, want, strlen(want)), 0);
        assert_non_null(strstr(err.message, "maximum"));
        json_decref(v);
        json_decref(values[i]);
    }
    /* a huge value: the total size is bounded */
    char *big = malloc(200000);
    assert_non_null(big);
    memset(big, 'v', 199999);
    big[199999] = '\0';
    json_t *v = json_pack("{s:{s:s}}", "env", "BIG", big);
    fb_permissions p;
    fb_error err = {0};
    assert_int_equal(fb_permissions_parse(v, "options.permissions", &p, &err), -1);
    assert_int_equal(strncmp(err.message, "options.permissions.env:", 24), 0);
    assert_non_null(strstr(err.message, "maximum"));
    json_decref(v);
    free(big);
}

static void test_reserved_keys(void **state)
{
    (void)state;
    const char *reserved[] = {"PATH", "HOME", "TMPDIR", "USER", "LOGNAME", "LD_PRELOAD", "LD_LIBRARY_PATH",
                              "LD_ANYTHING", "GCONV_PATH", "GLIBC_TUNABLES", "NODE_OPTIONS", "PYTHONPATH",
                              "PYTHONSTARTUP", "RUBYOPT", "RUBYLIB", "PHPRC", "PHP_INI_SCAN_DIR", "MALLOC_ARENA_MAX",
                              "FNBOX_SECRET", "HTTP_PROXY", "https_proxy", "NO_PROXY"};
    const char *free_keys[] = {"LANG", "TZ", "LC_ALL", "FOO", "API_KEY", "PATHS", "HOME_DIR", "LD", "NODE_ENV",
                               "DEBUG", "path"};
    for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++)
        if (!fb_env_key_reserved(reserved[i]))
            fail_msg("%s should be reserved", reserved[i]);
    for (size_t i = 0; i < sizeof free_keys / sizeof *free_keys; i++)
        if (fb_env_key_reserved(free_keys[i]))
            fail_msg("%s should not be reserved", free_keys[i]);
}

/* ---- command resolution, in a scratch tree: <dir>/usr/bin/{tool,plain,link-out}, <dir>/opt/outside ---- */

typedef struct tree {
    char root[64], usr[96], bin[96], prefix[96];
} tree;

static void write_file(const char *path, mode_t mode)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("#!/bin/sh\n", f);
    fclose(f);
    assert_int_equal(chmod(path, mode), 0);
}

static void make_tree(tree *t)
{
    char path[256];
    snprintf(t->root, sizeof t->root, "/tmp/fnbox-perm-XXXXXX");
    assert_non_null(mkdtemp(t->root));
    char real[4096];
    assert_non_null(realpath(t->root, real));
    assert_true(strlen(real) < sizeof t->root);
    memcpy(t->root, real, strlen(real) + 1);
    snprintf(t->usr, sizeof t->usr, "%s/usr", t->root);
    snprintf(t->bin, sizeof t->bin, "%s/usr/bin", t->root);
    snprintf(t->prefix, sizeof t->prefix, "%s/usr/", t->root);
    assert_int_equal(mkdir(t->usr, 0755), 0);
    assert_int_equal(mkdir(t->bin, 0755), 0);
    snprintf(path, sizeof path, "%s/opt", t->root);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(path, sizeof path, "%s/opt/outside", t->root);
    write_file(path, 0755);
    snprintf(path, sizeof path, "%s/tool", t->bin);
    write_file(path, 0755);
    snprintf(path, sizeof path, "%s/plain", t->bin);
    write_file(path, 0644);
    char target[256];
    snprintf(target, sizeof target, "%s/opt/outside", t->root);
    snprintf(path, sizeof path, "%s/link-out", t->bin);
    assert_int_equal(symlink(target, path), 0);
    snprintf(path, sizeof path, "%s/alias", t->bin);
    assert_int_equal(symlink("tool", path), 0);
    snprintf(path, sizeof path, "%s/sub", t->bin);
    assert_int_equal(mkdir(path, 0755), 0);
}

static void remove_tree(const tree *t)
{
    const char *names[] = {"usr/bin/tool", "usr/bin/plain", "usr/bin/link-out", "usr/bin/alias", "opt/outside"};
    char path[256];
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        snprintf(path, sizeof path, "%s/%s", t->root, names[i]);
        unlink(path);
    }
    const char *dirs[] = {"usr/bin/sub", "usr/bin", "usr", "opt", ""};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        snprintf(path, sizeof path, "%s/%s", t->root, dirs[i]);
        rmdir(path);
    }
}

/* Parses {'childProcess': cmds} and resolves against the tree; returns rc, p filled. */
static int resolve(const tree *t, const char *cmds_q, fb_permissions *p, fb_error *err)
{
    char *text = q(cmds_q);
    json_t *v = json_pack("{s:o}", "childProcess", json_loads(text, JSON_DECODE_ANY, NULL));
    free(text);
    assert_non_null(v);
    assert_int_equal(fb_permissions_parse(v, "permissions", p, err), 0);
    json_decref(v);
    const char *dirs[] = {t->bin, "/nonexistent-dir", NULL};
    return fb_permissions_resolve(p, "permissions.childProcess", dirs, t->prefix, err);
}

static void test_resolve(void **state)
{
    (void)state;
    tree t;
    make_tree(&t);
    fb_permissions p;
    fb_error err = {0};
    char want[256], abs_tool[256];

    /* names and an absolute path; a symlink to the same file is one entry */
    snprintf(abs_tool, sizeof abs_tool, "['tool','alias','%s/tool']", t.bin);
    assert_int_equal(resolve(&t, abs_tool, &p, &err), 0);
    snprintf(want, sizeof want, "%s/tool", t.bin);
    assert_int_equal(p.nexec_names, 3);
    assert_int_equal(p.nexec, 1);
    assert_string_equal(p.exec_allow[0], want);
    assert_null(p.exec_allow[1]);
    for (int i = 0; i < 3; i++)
        assert_int_equal(p.exec_index[i], 0);
    fb_permissions_free(&p);

    /* unknown: names the index, the command and where it looked */
    assert_int_equal(resolve(&t, "['tool','gti']", &p, &err), -1);
    assert_string_equal(fb_error_type(&err), "InvalidRequest");
    assert_int_equal(strncmp(err.message, "permissions.childProcess[1]: command 'gti' not found in ", 55), 0);
    assert_non_null(strstr(err.message, "/nonexistent-dir"));
    assert_null(p.exec_allow);
    fb_permissions_free(&p);

    /* not executable, a directory, outside the visible prefix, a missing absolute path */
    const char *bad[][2] = {{"['plain']", "not an executable file"},
                            {"['sub']", "not an executable file"},
                            {"['link-out']", "which the sandbox does not see"},
                            {"['/nonexistent-dir/x']", "does not exist"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(resolve(&t, bad[i][0], &p, &err), -1);
        assert_int_equal(strncmp(err.message, "permissions.childProcess[0]:", 28), 0);
        if (!strstr(err.message, bad[i][1]))
            fail_msg("%s: [%s] lacks '%s'", bad[i][0], err.message, bad[i][1]);
        fb_permissions_free(&p);
    }

    /* true and nothing resolve to nothing */
    json_t *v = json_pack("{s:b}", "childProcess", 1);
    assert_int_equal(fb_permissions_parse(v, "permissions", &p, &err), 0);
    const char *dirs[] = {t.bin, NULL};
    assert_int_equal(fb_permissions_resolve(&p, "permissions.childProcess", dirs, t.prefix, &err), 0);
    assert_true(p.exec_any);
    assert_null(p.exec_allow);
    fb_permissions_free(&p);
    json_decref(v);
    remove_tree(&t);
}

/* The real thing: Debian's /usr/bin and /bin, /usr/ visible. */
static void test_resolve_system(void **state)
{
    (void)state;
    json_t *v = json_loads("{\"childProcess\": [\"sh\", \"env\"]}", 0, NULL);
    fb_permissions p;
    fb_error err = {0};
    assert_int_equal(fb_permissions_parse(v, "permissions", &p, &err), 0);
    const char *dirs[] = {"/usr/bin", "/bin", NULL};
    assert_int_equal(fb_permissions_resolve(&p, "permissions.childProcess", dirs, "/usr/", &err), 0);
    assert_int_equal(p.nexec, 2);
    assert_int_equal(access(p.exec_allow[0], X_OK), 0);
    assert_int_equal(strncmp(p.exec_allow[1], "/usr/", 5), 0);
    fb_permissions_free(&p);
    json_decref(v);
}

/* ---- the C API's permission callbacks (fnbox_call_options): asked before anything runs ---- */

typedef struct asked {
    char log[512];
    const char *deny; /* the key or command to deny */
} asked;

static int env_cb(void *ctx, const char *key, const char *value, char *reason, size_t cap)
{
    asked *a = ctx;
    snprintf(a->log + strlen(a->log), sizeof a->log - strlen(a->log), "env %s=%s;", key, value);
    if (a->deny && strcmp(key, a->deny) == 0) {
        snprintf(reason, cap, "not for this tenant");
        return 0;
    }
    return 1;
}

static int cmd_cb(void *ctx, const char *command, const char *path, char *reason, size_t cap)
{
    asked *a = ctx;
    snprintf(a->log + strlen(a->log), sizeof a->log - strlen(a->log), "cmd %s@%s;", command, path ? path : "-");
    if (a->deny && strcmp(command, a->deny) == 0)
        return 0; /* no reason given */
    return 1;
}

/* Runs the request (one argument too many on purpose: a call that gets past the callbacks ends as an
 * ArgumentError before any sandbox starts) and returns the error type and message. */
static void run_call(const char *request, const fnbox_call_options *o, char *type, char *msg, size_t cap)
{
    char *result = NULL;
    size_t len = 0;
    assert_int_not_equal(fnbox_call(request, strlen(request), o, &result, &len), FNBOX_NO_RESULT);
    json_t *doc = json_loads(result, 0, NULL);
    assert_non_null(doc);
    json_t *e = json_object_get(doc, "error");
    snprintf(type, 64, "%s", json_string_value(json_object_get(e, "type")));
    snprintf(msg, cap, "%s", json_string_value(json_object_get(e, "message")));
    json_decref(doc);
    fnbox_free(result);
}

static void test_callbacks(void **state)
{
    (void)state;
    const char *request = "{\"language\":\"python\",\"code\":\"def f(a): pass\",\"args\":[1,2],"
                          "\"permissions\":{\"env\":{\"A\":\"1\",\"B\":\"2\"},\"childProcess\":[\"sh\"]}}";
    char type[64], msg[1024];
    asked a = {"", NULL};
    fnbox_call_options o = {.size = sizeof o, .cancel_fd = -1, .permission_ctx = &a, .env = env_cb,
                            .command = cmd_cb};

    /* everything allowed: each key and command asked once, in order, with the resolved path */
    run_call(request, &o, type, msg, sizeof msg);
    assert_string_equal(type, "TypeError"); /* Python's own: f(a) given two arguments */
    assert_non_null(strstr(a.log, "env A=1;env B=2;cmd sh@/usr/"));

    /* an env key denied, with a reason */
    a = (asked){"", "B"};
    run_call(request, &o, type, msg, sizeof msg);
    assert_string_equal(type, "PermissionDenied");
    assert_string_equal(msg, "permissions.env.B: denied by the host: not for this tenant");
    assert_null(strstr(a.log, "cmd")); /* decided on the first denial */

    /* a command denied, without a reason */
    a = (asked){"", "sh"};
    run_call(request, &o, type, msg, sizeof msg);
    assert_string_equal(type, "PermissionDenied");
    assert_string_equal(msg, "permissions.childProcess[0]: command 'sh' denied by the host");

    /* childProcess true: asked once with "*" */
    const char *any = "{\"language\":\"python\",\"code\":\"def f(a): pass\",\"args\":[1,2],"
                      "\"permissions\":\"allowAllChildProcess\"}";
    a = (asked){"", "*"};
    run_call(any, &o, type, msg, sizeof msg);
    assert_string_equal(type, "PermissionDenied");
    assert_string_equal(a.log, "cmd *@-;");
    assert_non_null(strstr(msg, "permissions.childProcess: running any command was denied by the host"));

    /* an older caller's smaller struct: the callbacks are not there, the request alone decides */
    struct {
        size_t size;
        int cancel_fd;
    } old = {sizeof old, -1};
    a = (asked){"", "B"};
    run_call(request, (const fnbox_call_options *)(const void *)&old, type, msg, sizeof msg);
    assert_string_equal(type, "TypeError");
    assert_string_equal(a.log, "");

    /* NULL callbacks and NULL options */
    fnbox_call_options none = {.size = sizeof none, .cancel_fd = -1};
    run_call(request, &none, type, msg, sizeof msg);
    assert_string_equal(type, "TypeError");
    run_call(request, NULL, type, msg, sizeof msg);
    assert_string_equal(type, "TypeError");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_table),  cmocka_unit_test(test_absent),
        cmocka_unit_test(test_invalid_table), cmocka_unit_test(test_counts),
        cmocka_unit_test(test_reserved_keys), cmocka_unit_test(test_resolve),
        cmocka_unit_test(test_resolve_system), cmocka_unit_test(test_callbacks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
