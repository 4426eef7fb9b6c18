/* The PHP driver's per-call extra (php_ini.c): the host's conf.d minus the extensions a harness never
 * loads usefully (readline, opcache), as one file PHP scans instead. */
#ifndef FB_LANG_PHP_INI_H
#define FB_LANG_PHP_INI_H
#include <stdbool.h>
#include <stddef.h>

/* Where the file goes inside the sandbox; PHP_INI_SCAN_DIR names this directory (the harness checks for
 * exactly this value before it removes the variable). */
#define FB_PHP_CONF_DIR "/.fnbox/php.d"

/* What PHP's exec adds to a call's sandbox (php.c): a file under /.fnbox and an environment entry. path
 * and env are static strings; data is malloc'd and the caller's to free. */
typedef struct fb_lang_extra {
    const char *path;                  /* NULL: no file */
    char *data;
    size_t len;
    const char *env;                   /* "KEY=value", or NULL */
} fb_lang_extra;

/* For PHP's exec: finds the conf.d of a Debian-style binary (/usr/bin/php -> php8.2 ->
 * /etc/php/8.2/cli/conf.d) and calls fb_php_ini_extra_from; nothing added for any other layout. */
void fb_php_ini_extra(const char *runtime, fb_lang_extra *out);
/* The extra for the conf.d directory dir: nothing (all zero) unless some file there loads readline or
 * opcache and every file could be read. */
void fb_php_ini_extra_from(const char *dir, fb_lang_extra *out);
/* Whether an ini file's text loads readline or opcache (extension= / zend_extension=, any spelling PHP
 * accepts: a path, quotes, with or without ".so"; commented-out lines do not count). */
bool fb_php_ini_loads_unused(const char *text, size_t len);

#endif
