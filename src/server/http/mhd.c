/* libmicrohttpd, loaded when the server starts (dlopen) instead of linked into the fnbox binary.
 *
 * Why: linked, it brought GnuTLS and its dependencies (p11-kit, libtasn1, libidn2, libunistring, hogweed, gmp,
 * libffi) into every fnbox process, and their loading and constructors cost every `fnbox call` about 1.5 ms
 * of start-up (measured: `fnbox --version` 3.1 ms against 1.65 ms without them, about 7% of a Python call),
 * although only `fnbox serve` uses them.
 *
 * How: the functions the server calls are defined here with the library's own names and prototypes
 * (microhttpd.h), and forward to the library's, looked up once. The variadic ones forward the arguments the
 * server passes (see each). fb_http_mhd_load says why it could not be loaded; a call before a successful load
 * fails as the library would on bad input (NULL, MHD_NO). */
#include <dlfcn.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

#include "server/http/internal.h"

#define MHD_SONAME "libmicrohttpd.so.12"

static struct {
    bool loaded;
    char why[512];
    struct MHD_Daemon *(*start_daemon_va)(unsigned int, uint16_t, MHD_AcceptPolicyCallback, void *,
                                          MHD_AccessHandlerCallback, void *, va_list);
    void (*stop_daemon)(struct MHD_Daemon *);
    MHD_socket (*quiesce_daemon)(struct MHD_Daemon *);
    enum MHD_Result (*queue_response)(struct MHD_Connection *, unsigned int, struct MHD_Response *);
    const char *(*lookup_connection_value)(struct MHD_Connection *, enum MHD_ValueKind, const char *);
    enum MHD_Result (*lookup_connection_value_n)(struct MHD_Connection *, enum MHD_ValueKind, const char *, size_t,
                                                 const char **, size_t *);
    const union MHD_ConnectionInfo *(*get_connection_info)(struct MHD_Connection *, enum MHD_ConnectionInfoType,
                                                           ...);
    enum MHD_Result (*set_connection_option)(struct MHD_Connection *, enum MHD_CONNECTION_OPTION, ...);
    struct MHD_Response *(*create_from_buffer)(size_t, void *, enum MHD_ResponseMemoryMode);
    struct MHD_Response *(*create_from_buffer_free)(size_t, void *, MHD_ContentReaderFreeCallback);
    struct MHD_Response *(*create_from_callback)(uint64_t, size_t, MHD_ContentReaderCallback, void *,
                                                 MHD_ContentReaderFreeCallback);
    struct MHD_Response *(*create_from_iovec)(const struct MHD_IoVec *, unsigned int, MHD_ContentReaderFreeCallback,
                                              void *);
    enum MHD_Result (*add_response_header)(struct MHD_Response *, const char *, const char *);
    void (*destroy_response)(struct MHD_Response *);
} lib;

static pthread_once_t k_once = PTHREAD_ONCE_INIT;

/* Each symbol into its slot; false (with why) at the first one missing. */
static bool resolve(void *h)
{
    struct {
        const char *name;
        void **slot;
    } const syms[] = {
        {"MHD_start_daemon_va", (void **)&lib.start_daemon_va},
        {"MHD_stop_daemon", (void **)&lib.stop_daemon},
        {"MHD_quiesce_daemon", (void **)&lib.quiesce_daemon},
        {"MHD_queue_response", (void **)&lib.queue_response},
        {"MHD_lookup_connection_value", (void **)&lib.lookup_connection_value},
        {"MHD_lookup_connection_value_n", (void **)&lib.lookup_connection_value_n},
        {"MHD_get_connection_info", (void **)&lib.get_connection_info},
        {"MHD_set_connection_option", (void **)&lib.set_connection_option},
        {"MHD_create_response_from_buffer", (void **)&lib.create_from_buffer},
        {"MHD_create_response_from_buffer_with_free_callback", (void **)&lib.create_from_buffer_free},
        {"MHD_create_response_from_callback", (void **)&lib.create_from_callback},
        {"MHD_create_response_from_iovec", (void **)&lib.create_from_iovec},
        {"MHD_add_response_header", (void **)&lib.add_response_header},
        {"MHD_destroy_response", (void **)&lib.destroy_response},
    };
    for (size_t i = 0; i < sizeof syms / sizeof *syms; i++) {
        *syms[i].slot = dlsym(h, syms[i].name);
        if (!*syms[i].slot) {
            snprintf(lib.why, sizeof lib.why, "%s has no %s (libmicrohttpd 0.9.75 or later is needed)", MHD_SONAME,
                     syms[i].name);
            return false;
        }
    }
    return true;
}

static void load(void)
{
    void *h = dlopen(MHD_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(lib.why, sizeof lib.why, "%s (Debian's libmicrohttpd12: scripts/install-deps.sh installs it)",
                 e ? e : MHD_SONAME " could not be loaded");
        return;
    }
    lib.loaded = resolve(h); /* kept loaded for the process's life: its threads and responses use it */
}

int fb_http_mhd_load(fb_error *err)
{
    pthread_once(&k_once, load);
    return lib.loaded ? 0 : fb_set_error(err, FB_ERR_INTERNAL, 0, "the HTTP server's library: %s", lib.why);
}

static bool ready(void)
{
    pthread_once(&k_once, load);
    return lib.loaded;
}

/* ---- the library's functions the server calls ---- */

struct MHD_Daemon *MHD_start_daemon(unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc, void *apc_cls,
                                    MHD_AccessHandlerCallback dh, void *dh_cls, ...)
{
    if (!ready())
        return NULL;
    va_list ap;
    va_start(ap, dh_cls);
    struct MHD_Daemon *d = lib.start_daemon_va(flags, port, apc, apc_cls, dh, dh_cls, ap);
    va_end(ap);
    return d;
}

void MHD_stop_daemon(struct MHD_Daemon *daemon)
{
    if (ready())
        lib.stop_daemon(daemon);
}

MHD_socket MHD_quiesce_daemon(struct MHD_Daemon *daemon)
{
    return ready() ? lib.quiesce_daemon(daemon) : MHD_INVALID_SOCKET;
}

enum MHD_Result MHD_queue_response(struct MHD_Connection *connection, unsigned int status_code,
                                   struct MHD_Response *response)
{
    return ready() ? lib.queue_response(connection, status_code, response) : MHD_NO;
}

const char *MHD_lookup_connection_value(struct MHD_Connection *connection, enum MHD_ValueKind kind, const char *key)
{
    return ready() ? lib.lookup_connection_value(connection, kind, key) : NULL;
}

enum MHD_Result MHD_lookup_connection_value_n(struct MHD_Connection *connection, enum MHD_ValueKind kind,
                                              const char *key, size_t key_size, const char **value_ptr,
                                              size_t *value_size_ptr)
{
    return ready() ? lib.lookup_connection_value_n(connection, kind, key, key_size, value_ptr, value_size_ptr)
                   : MHD_NO;
}

/* Only the info types that take no further argument (the server asks MHD_CONNECTION_INFO_CONNECTION_FD). */
const union MHD_ConnectionInfo *MHD_get_connection_info(struct MHD_Connection *connection,
                                                        enum MHD_ConnectionInfoType info_type, ...)
{
    return ready() ? lib.get_connection_info(connection, info_type) : NULL;
}

/* Only MHD_CONNECTION_OPTION_TIMEOUT, whose one argument is an unsigned int (the server sets no other). */
enum MHD_Result MHD_set_connection_option(struct MHD_Connection *connection, enum MHD_CONNECTION_OPTION option, ...)
{
    if (!ready() || option != MHD_CONNECTION_OPTION_TIMEOUT)
        return MHD_NO;
    va_list ap;
    va_start(ap, option);
    unsigned int seconds = va_arg(ap, unsigned int);
    va_end(ap);
    return lib.set_connection_option(connection, option, seconds);
}

struct MHD_Response *MHD_create_response_from_buffer(size_t size, void *buffer, enum MHD_ResponseMemoryMode mode)
{
    return ready() ? lib.create_from_buffer(size, buffer, mode) : NULL;
}

struct MHD_Response *MHD_create_response_from_buffer_with_free_callback(size_t size, void *buffer,
                                                                        MHD_ContentReaderFreeCallback crfc)
{
    return ready() ? lib.create_from_buffer_free(size, buffer, crfc) : NULL;
}

struct MHD_Response *MHD_create_response_from_callback(uint64_t size, size_t block_size, MHD_ContentReaderCallback crc,
                                                       void *crc_cls, MHD_ContentReaderFreeCallback crfc)
{
    return ready() ? lib.create_from_callback(size, block_size, crc, crc_cls, crfc) : NULL;
}

struct MHD_Response *MHD_create_response_from_iovec(const struct MHD_IoVec *iov, unsigned int iovcnt,
                                                    MHD_ContentReaderFreeCallback free_cb, void *cls)
{
    return ready() ? lib.create_from_iovec(iov, iovcnt, free_cb, cls) : NULL;
}

enum MHD_Result MHD_add_response_header(struct MHD_Response *response, const char *header, const char *content)
{
    return ready() ? lib.add_response_header(response, header, content) : MHD_NO;
}

void MHD_destroy_response(struct MHD_Response *response)
{
    if (ready())
        lib.destroy_response(response);
}
