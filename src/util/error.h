/* Errors are values: every fallible library function takes an fb_error* and returns -1 (or NULL) after
 * filling it with a kind (fb_errkind), the errno that caused it (0 if none) and a message naming the cause.
 * Library code never prints and never exits; only src/cli/ turns an error into an exit code, and the
 * servers map kinds to their own statuses from the same table (fb_errkind_family).
 *
 * Each kind has one wire name, the `error.type` a result carries (fb_errkind_name); the table in error.c
 * is the only place these names are spelled. One exception: an argument mismatch fnbox finds before the
 * call is reported with the class the language itself would raise (Python `TypeError`, PHP
 * `ArgumentCountError`), kept in lang_type (fb_set_arg_error); its kind stays FB_ERR_ARGUMENT. */
#ifndef FB_ERROR_H
#define FB_ERROR_H
#include <stdbool.h>

#define FB_ERROR_TYPE_MAX 64
#define FB_ERROR_MSG_MAX 2048

/* Keep in the order of the table in error.c (a static assertion there checks the count). */
typedef enum fb_errkind {
    FB_ERR_NONE = 0,
    /* the request */
    FB_ERR_INVALID_REQUEST,     /* InvalidRequest: the message starts with the field */
    FB_ERR_INVALID_PATTERN,     /* InvalidPattern: a glob (fs/glob.c); rules.c reports it as InvalidRequest */
    FB_ERR_PERMISSION_DENIED,   /* PermissionDenied: the host's callbacks said no */
    /* before the function runs */
    FB_ERR_FUNCTION_NOT_FOUND,  /* FunctionNotFound */
    FB_ERR_AMBIGUOUS_FUNCTION,  /* AmbiguousFunction */
    FB_ERR_ARGUMENT,            /* ArgumentError (or the language's own class, lang_type) */
    FB_ERR_UNSUPPORTED_TYPE,    /* UnsupportedType: a C/C++ parameter type the dispatcher cannot pass */
    FB_ERR_COMPILE,             /* CompileError */
    FB_ERR_DEPENDENCY_INSTALL,  /* DependencyInstallFailed: the installer of `dependencies` failed (its
                                   output in the message); nothing was cached */
    /* the sandbox */
    FB_ERR_SANDBOX_SETUP,       /* SandboxSetupFailed: names the step and errno */
    FB_ERR_KERNEL_FEATURE,      /* KernelFeatureMissing: fail closed, never a weaker sandbox */
    /* host files */
    FB_ERR_HOST_PATH,           /* HostPathError */
    FB_ERR_SYNC_FAILED,         /* SyncFailed */
    /* the function's result, limits and signals (core/result.c) */
    FB_ERR_SERIALIZATION,       /* SerializationError */
    FB_ERR_NO_RESULT,           /* NoResult */
    FB_ERR_RESULT_TOO_LARGE,    /* ResultTooLarge */
    FB_ERR_TIMEOUT,             /* TimeoutError */
    FB_ERR_MEMORY_LIMIT,        /* MemoryLimitExceeded */
    FB_ERR_CPU_LIMIT,           /* CpuLimitExceeded */
    FB_ERR_FILE_SIZE_LIMIT,     /* FileSizeLimitExceeded */
    FB_ERR_CRASH,               /* Crash */
    FB_ERR_TERMINATED,          /* Terminated: cancelled by the caller */
    /* the HTTP server's own refusals (src/server/http/): HTTP has a status of its own for each */
    FB_ERR_NOT_FOUND,           /* NotFound: no such route (HTTP 404) */
    FB_ERR_METHOD_NOT_ALLOWED,  /* MethodNotAllowed: the path exists, not with this method (405) */
    FB_ERR_UNAUTHORIZED,        /* Unauthorized: no bearer token, or not one the server holds (401) */
    FB_ERR_PAYLOAD_TOO_LARGE,   /* PayloadTooLarge: a body over the server's maximum (413) */
    FB_ERR_SESSION_DEAD,        /* SessionDead: the session's sandbox died by itself; open a new one (410) */
    FB_ERR_OVERLOADED,          /* Overloaded: every execution slot and queue place taken, or shutting
                                   down; nothing ran, try again later (503, Retry-After) */
    /* fnbox itself */
    FB_ERR_OUT_OF_MEMORY,       /* OutOfMemory: fnbox's own allocation failed (not the function's limit) */
    FB_ERR_INTERNAL,            /* InternalError: an invariant broken, a fixed table full */
    FB_ERR_KIND_COUNT
} fb_errkind;

/* Who is to act on an error of a kind: what the CLI's exit code and a server's status follow. */
typedef enum fb_errfamily {
    FB_ERRFAM_NONE = 0,
    FB_ERRFAM_REQUEST,   /* the caller's input (exit 2, HTTP 400) */
    FB_ERRFAM_DENIED,    /* the host refused (HTTP 403) */
    FB_ERRFAM_CALL,      /* the call did not fit or the function failed: a normal result */
    FB_ERRFAM_SETUP,     /* no sandbox could be built (exit 3, HTTP 503) */
    FB_ERRFAM_FNBOX,     /* fnbox's own failure (HTTP 500) */
} fb_errfamily;

typedef struct fb_error {
    fb_errkind kind;
    char lang_type[FB_ERROR_TYPE_MAX]; /* "" or the language's class for an FB_ERR_ARGUMENT */
    char message[FB_ERROR_MSG_MAX];    /* human readable, names the field/path/step */
    int err_no;                        /* errno of the cause, 0 if none */
} fb_error;

/* Sets err (if non-NULL) and returns -1 so callers can `return fb_set_error(...)`. */
int fb_set_error(fb_error *err, fb_errkind kind, int err_no, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* An argument mismatch with the language's own class (NULL or "": plain ArgumentError). Returns -1. */
int fb_set_arg_error(fb_error *err, const char *lang_type, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Prefixes the existing message with more context ("step: <old message>"). Returns -1. */
int fb_wrap_error(fb_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void fb_error_clear(fb_error *err);
bool fb_error_is_set(const fb_error *err);

/* The error.type a result carries: lang_type when set, else the kind's wire name. */
const char *fb_error_type(const fb_error *err);
/* The wire name of a kind ("InvalidRequest"); "Error" for FB_ERR_NONE or an out-of-range value. */
const char *fb_errkind_name(fb_errkind kind);
/* The kind of a wire name, or FB_ERR_NONE when it names none (e.g. a language's own class). */
fb_errkind fb_errkind_from_name(const char *name);
fb_errfamily fb_errkind_family(fb_errkind kind);

#endif
