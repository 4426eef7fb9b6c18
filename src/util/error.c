#include "util/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct kind_info {
    const char *name;
    fb_errfamily family;
} kind_info;

/* The one table of wire names (docs/internals/error-model.md lists what each means and who sets it). */
static const kind_info k_kinds[] = {
    [FB_ERR_NONE] = {"Error", FB_ERRFAM_NONE},
    [FB_ERR_INVALID_REQUEST] = {"InvalidRequest", FB_ERRFAM_REQUEST},
    [FB_ERR_INVALID_PATTERN] = {"InvalidPattern", FB_ERRFAM_REQUEST},
    [FB_ERR_PERMISSION_DENIED] = {"PermissionDenied", FB_ERRFAM_DENIED},
    [FB_ERR_FUNCTION_NOT_FOUND] = {"FunctionNotFound", FB_ERRFAM_CALL},
    [FB_ERR_AMBIGUOUS_FUNCTION] = {"AmbiguousFunction", FB_ERRFAM_CALL},
    [FB_ERR_ARGUMENT] = {"ArgumentError", FB_ERRFAM_CALL},
    [FB_ERR_UNSUPPORTED_TYPE] = {"UnsupportedType", FB_ERRFAM_CALL},
    [FB_ERR_COMPILE] = {"CompileError", FB_ERRFAM_CALL},
    [FB_ERR_DEPENDENCY_INSTALL] = {"DependencyInstallFailed", FB_ERRFAM_CALL},
    [FB_ERR_SANDBOX_SETUP] = {"SandboxSetupFailed", FB_ERRFAM_SETUP},
    [FB_ERR_KERNEL_FEATURE] = {"KernelFeatureMissing", FB_ERRFAM_SETUP},
    [FB_ERR_HOST_PATH] = {"HostPathError", FB_ERRFAM_CALL},
    [FB_ERR_SYNC_FAILED] = {"SyncFailed", FB_ERRFAM_CALL},
    [FB_ERR_SERIALIZATION] = {"SerializationError", FB_ERRFAM_CALL},
    [FB_ERR_NO_RESULT] = {"NoResult", FB_ERRFAM_CALL},
    [FB_ERR_RESULT_TOO_LARGE] = {"ResultTooLarge", FB_ERRFAM_CALL},
    [FB_ERR_TIMEOUT] = {"TimeoutError", FB_ERRFAM_CALL},
    [FB_ERR_MEMORY_LIMIT] = {"MemoryLimitExceeded", FB_ERRFAM_CALL},
    [FB_ERR_CPU_LIMIT] = {"CpuLimitExceeded", FB_ERRFAM_CALL},
    [FB_ERR_FILE_SIZE_LIMIT] = {"FileSizeLimitExceeded", FB_ERRFAM_CALL},
    [FB_ERR_CRASH] = {"Crash", FB_ERRFAM_CALL},
    [FB_ERR_TERMINATED] = {"Terminated", FB_ERRFAM_CALL},
    [FB_ERR_NOT_FOUND] = {"NotFound", FB_ERRFAM_REQUEST},
    [FB_ERR_METHOD_NOT_ALLOWED] = {"MethodNotAllowed", FB_ERRFAM_REQUEST},
    [FB_ERR_UNAUTHORIZED] = {"Unauthorized", FB_ERRFAM_REQUEST},
    [FB_ERR_PAYLOAD_TOO_LARGE] = {"PayloadTooLarge", FB_ERRFAM_REQUEST},
    [FB_ERR_SESSION_DEAD] = {"SessionDead", FB_ERRFAM_REQUEST},
    [FB_ERR_OVERLOADED] = {"Overloaded", FB_ERRFAM_SETUP},
    [FB_ERR_OUT_OF_MEMORY] = {"OutOfMemory", FB_ERRFAM_FNBOX},
    [FB_ERR_INTERNAL] = {"InternalError", FB_ERRFAM_FNBOX},
};
_Static_assert(sizeof k_kinds / sizeof k_kinds[0] == FB_ERR_KIND_COUNT, "one table entry per fb_errkind");

static const kind_info *info(fb_errkind kind)
{
    return (unsigned)kind < FB_ERR_KIND_COUNT ? &k_kinds[kind] : &k_kinds[FB_ERR_NONE];
}

const char *fb_errkind_name(fb_errkind kind)
{
    return info(kind)->name;
}

fb_errfamily fb_errkind_family(fb_errkind kind)
{
    return info(kind)->family;
}

fb_errkind fb_errkind_from_name(const char *name)
{
    for (unsigned k = FB_ERR_NONE + 1; name && k < FB_ERR_KIND_COUNT; k++)
        if (strcmp(k_kinds[k].name, name) == 0)
            return (fb_errkind)k;
    return FB_ERR_NONE;
}

const char *fb_error_type(const fb_error *err)
{
    if (!err)
        return fb_errkind_name(FB_ERR_NONE);
    return err->lang_type[0] ? err->lang_type : fb_errkind_name(err->kind);
}

static void set_message(fb_error *err, int err_no, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));
static void set_message(fb_error *err, int err_no, const char *fmt, va_list ap)
{
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    err->err_no = err_no;
    if (err_no) {
        size_t n = strlen(err->message);
        snprintf(err->message + n, sizeof err->message - n, ": %s", strerror(err_no));
    }
}

int fb_set_error(fb_error *err, fb_errkind kind, int err_no, const char *fmt, ...)
{
    if (!err)
        return -1;
    /* FB_ERR_NONE would read as "no error" to fb_error_is_set: a caller's slip must not hide a failure */
    err->kind = kind == FB_ERR_NONE || (unsigned)kind >= FB_ERR_KIND_COUNT ? FB_ERR_INTERNAL : kind;
    err->lang_type[0] = '\0';
    va_list ap;
    va_start(ap, fmt);
    set_message(err, err_no, fmt, ap);
    va_end(ap);
    return -1;
}

int fb_set_arg_error(fb_error *err, const char *lang_type, const char *fmt, ...)
{
    if (!err)
        return -1;
    err->kind = FB_ERR_ARGUMENT;
    snprintf(err->lang_type, sizeof err->lang_type, "%s", lang_type ? lang_type : "");
    va_list ap;
    va_start(ap, fmt);
    set_message(err, 0, fmt, ap);
    va_end(ap);
    return -1;
}

int fb_wrap_error(fb_error *err, const char *fmt, ...)
{
    if (!err)
        return -1;
    char prefix[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(prefix, sizeof prefix - 2, fmt, ap);
    va_end(ap);
    if (n < 0)
        return -1;
    size_t plen = strlen(prefix);
    memcpy(prefix + plen, ": ", 3);
    plen += 2;
    size_t mlen = strnlen(err->message, sizeof err->message - 1);
    if (plen + mlen >= sizeof err->message)
        mlen = sizeof err->message - 1 - plen;
    memmove(err->message + plen, err->message, mlen);
    memcpy(err->message, prefix, plen);
    err->message[plen + mlen] = '\0';
    return -1;
}

void fb_error_clear(fb_error *err)
{
    if (err)
        memset(err, 0, sizeof *err);
}

bool fb_error_is_set(const fb_error *err)
{
    return err && err->kind != FB_ERR_NONE;
}
