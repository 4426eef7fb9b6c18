/* Errors are values: every fallible library function takes an fb_error* and returns -1 (or NULL) after
 * filling it with a type name, the errno that caused it (0 if none) and a message naming the cause.
 * Library code never prints and never exits; only src/cli/ turns an error into an exit code. */
#ifndef FB_ERROR_H
#define FB_ERROR_H
#include <stdbool.h>

#define FB_ERROR_TYPE_MAX 64
#define FB_ERROR_MSG_MAX 2048

typedef struct fb_error {
    char type[FB_ERROR_TYPE_MAX];   /* e.g. "InvalidRequest", "ArgumentError", "SandboxSetupFailed" */
    char message[FB_ERROR_MSG_MAX]; /* human readable, names the field/path/step */
    int err_no;                     /* errno of the cause, 0 if none */
} fb_error;

/* Sets err (if non-NULL) and returns -1 so callers can `return fb_set_error(...)`. */
int fb_set_error(fb_error *err, const char *type, int err_no, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Prefixes the existing message with more context ("step: <old message>"). Returns -1. */
int fb_wrap_error(fb_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void fb_error_clear(fb_error *err);
bool fb_error_is_set(const fb_error *err);

#endif
