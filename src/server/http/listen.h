/* Where the server listens: `--listen HOST:PORT` (TCP; an IPv6 host in brackets) or `--listen
 * unix:PATH`, parsed, bound and cleaned up (a unix socket file is removed at the end if it is still
 * the one the server made). */
#ifndef FB_HTTP_LISTEN_H
#define FB_HTTP_LISTEN_H
#include <stdbool.h>
#include <sys/types.h>
#include <time.h>

#include "util/error.h"

#define FB_HTTP_LISTEN_BACKLOG 128
#define FB_HTTP_HOST_MAX 256
#define FB_HTTP_UNIX_PATH_MAX 108 /* sizeof sun_path, the NUL included */

typedef struct fb_http_listen_spec {
    bool unix_socket;
    char host[FB_HTTP_HOST_MAX]; /* TCP: a name or address, brackets removed; "" is every interface */
    char port[8];                /* TCP: decimal, 0..65535 (0: any free port; the log says which) */
    char path[FB_HTTP_UNIX_PATH_MAX];
} fb_http_listen_spec;

typedef struct fb_http_listener {
    int fd;             /* listening socket, or -1; closed by fb_http_listener_close unless taken */
    bool loopback;      /* only this host can connect (a loopback address, or a unix socket) */
    char address[320];  /* "127.0.0.1:8080", "[::1]:8080", "unix:/run/fnbox.sock" */
    char path[FB_HTTP_UNIX_PATH_MAX]; /* the socket file made, "" for TCP */
    dev_t dev;          /* the socket file's identity, checked before removing it: a file made later at
                           the path may reuse the inode number, not also its change time */
    ino_t ino;
    struct timespec ctime;
} fb_http_listener;

/* Pure: "127.0.0.1:8080", "[::1]:0", ":8080" (every interface), "localhost:80", "unix:/path". */
int fb_http_listen_parse(const char *text, fb_http_listen_spec *out, fb_error *err);
/* Binds and listens (close-on-exec). A unix socket file gets mode 0600: without tokens the file mode is
 * the access control. A stale socket file (nothing answers on it) is replaced; anything else at the path
 * is an error. require_loopback refuses an address other hosts could reach. */
int fb_http_listener_open(const fb_http_listen_spec *spec, bool require_loopback, fb_http_listener *l,
                          fb_error *err);
/* Closes the socket (if still held) and removes the unix socket file it made. Idempotent. */
void fb_http_listener_close(fb_http_listener *l);

#endif
