/* The PHP driver: the PHP CLI from the system (never php-cgi: no CGI headers in stdout). The host's php.ini
 * and conf.d are read (the sandbox shows /etc/php read-only; conf.d through php_ini.c, which leaves out
 * readline and opcache), so the extensions users expect are there;
 * the -d options below pin what the harness protocol depends on, whatever that php.ini says. */
#include "harness/harness.h"
#include "lang/lang.h"
#include "lang/php_ini.h"

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
/* One argument per setting (`-dname=value`): the executor passes at most MAX_ARGV - 3 runtime arguments. */
static const char *const k_args[] = {"-ddisplay_errors=stderr", "-dlog_errors=0",  "-dhtml_errors=0",
                                     "-derror_reporting=E_ALL",  "-dopcache.enable_cli=0", "-dauto_prepend_file=",
                                     "-dauto_append_file=",      "-doutput_buffering=0", "-dffi.enable=preload",
                                     NULL};
static const char *const k_env[] = {NULL};

const fb_lang_driver fb_lang_php = {
    .name = "php",
    .aliases = k_aliases,
    .runtimes = k_runtimes,
    .runtime_args = k_args,
    .extra = fb_php_ini_extra, /* conf.d without readline and opcache: ~1.1 ms less per start */
    .env = k_env,
    .harness_path = "/.fnbox/harness.php",
    .harness_source = php_harness,
    .arg_style = FB_ARGS_PHP,
    /* Too few arguments...; Unknown named parameter $x */
    .arg_errors = {.count = "ArgumentCountError", .name = "Error"},
    .underscore_private = true,
    .infer = fb_infer_php,
    .convention = "function f(...$args)",
    .package = "php-cli",
};
