/* The PHP driver: the PHP CLI from the system (never php-cgi: no CGI headers in stdout). The host's php.ini
 * and conf.d are read (the sandbox shows /etc/php read-only; conf.d through php_ini.c, which leaves out
 * readline and opcache), so the extensions users expect are there;
 * the -d options below pin what the harness protocol depends on, whatever that php.ini says. */
#include "harness/harness.h"
#include "lang/lang.h"
#include "lang/php_ini.h"

static const char *php_kernel(size_t *len)
{
    *len = (size_t)fb_harness_php_kernel_len;
    return fb_harness_php_kernel;
}

static const char *php_harness(size_t *len)
{
    *len = (size_t)fb_harness_php_len;
    return fb_harness_php;
}

static const char *const k_aliases[] = {NULL};
static const char *const k_runtimes[] = {"/usr/bin/php", "/usr/local/bin/php", NULL};
/* Warnings and notices go to stderr as plain text (display_errors=stderr, once: log_errors=0 would otherwise
 * print them a second time), never to stdout or as HTML; no prepended/appended files; no output buffering,
 * so the function's output reaches fd 1 before the result reaches fd 3. ffi.enable=preload (PHP's default)
 * lets the CLI harness mark fds 3/4 close-on-exec and read exit()'s status. */
/* One argument per setting (`-dname=value`): an interpreter gets at most FB_LANG_MAX_ARGV - 3 arguments. */
static const char *const k_args[] = {"-ddisplay_errors=stderr", "-dlog_errors=0",  "-dhtml_errors=0",
                                     "-derror_reporting=E_ALL",  "-dopcache.enable_cli=0", "-dauto_prepend_file=",
                                     "-dauto_append_file=",      "-doutput_buffering=0", "-dffi.enable=preload",
                                     NULL};
static const char *const k_env[] = {NULL};
static const fb_lang_interpreter k_interpreter = {.args = k_args, .env = k_env,
                                                  .harness_path = "/.fnbox/harness.php"};

/* The interpreter on its harness, plus the host's conf.d without readline and opcache (php_ini.c): ~1.1 ms
 * less per start. When the conf.d cannot be worked out, PHP reads its own. */
static int php_exec(const fb_lang_driver *d, const fb_lang_runnable *run, fb_lang_exec *out, fb_error *err)
{
    if (fb_lang_interpreter_exec(d, run, out, err) < 0)
        return -1;
    fb_lang_extra extra;
    fb_php_ini_extra(run->runtime, &extra);
    out->owned = extra.data;
    if (extra.path && fb_lang_exec_add_file(out, (fb_lang_file){.path = extra.path, .data = extra.data,
                                                                .len = extra.len}, err) < 0)
        return -1;
    return extra.env ? fb_lang_exec_add_env(out, extra.env, err) : 0;
}

const fb_lang_driver fb_lang_php = {
    .name = "php",
    .aliases = k_aliases,
    .runtimes = k_runtimes,
    .convention = "function f(...$args)",
    .package = "php-cli",
    .infer = fb_infer_php,
    .underscore_private = true,
    .normalize = fb_normalize_php,
    .args_as_text = fb_lang_args_as_text,
    /* Too few arguments...; Unknown named parameter $x */
    .arg_errors = {.count = "ArgumentCountError", .name = "Error"},
    .exec = php_exec,
    .interpreter = &k_interpreter,
    .harness_source = php_harness,
    .kernel_source = php_kernel,
    .kernel_file = "kernel.php",
    .harness_input = fb_lang_harness_input,
};
