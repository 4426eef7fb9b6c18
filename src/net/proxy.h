/* The network proxy of one call (docs/internals/network.md): HTTP (CONNECT, and plain-HTTP forwarding of
 * absolute-URI requests) and SOCKS5 (CONNECT; IPv4, IPv6 and domain names; no authentication) on one
 * listening socket, told apart by the first byte (0x05 = SOCKS5). It runs on a thread of its own in
 * fnbox, outside the sandbox: it resolves names itself (getaddrinfo, on short-lived resolver threads),
 * checks every destination against the policy before and after resolution, connects from the host's
 * network namespace and relays bytes. Every allowed and refused connection is logged.
 *
 * The listening socket is the one the sandbox's init opened on 127.0.0.1:FB_PROXY_PORT inside the call's
 * network namespace (core asks the sandbox for it): connections accepted on it come from the sandbox
 * only. net/ knows nothing of the sandbox; the caller hands the socket over (fb_proxy_on_listen). */
#ifndef FB_NET_PROXY_H
#define FB_NET_PROXY_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/policy.h"
#include "util/error.h"

/* The port fb_proxy_env names. The sandbox's listener must be on it (FB_SANDBOX_PROXY_PORT in
 * sandbox/sandbox.h; neither layer includes the other, so the caller that joins them checks they agree). */
#define FB_PROXY_PORT 3128
#define FB_PROXY_MAX_CONNS 64          /* concurrent connections; more are accepted and closed (logged) */
#define FB_PROXY_BUF_BYTES 16384U     /* per direction per connection */
#define FB_PROXY_HEAD_BYTES 8192U      /* an HTTP request head / SOCKS5 handshake */
#define FB_PROXY_MAX_LOG 1000          /* log entries kept; later ones are counted (fb_proxy_log_dropped) */
#define FB_PROXY_CONNECT_TIMEOUT_MS 10000 /* per address tried */
#define FB_PROXY_MAX_ADDRS 8           /* resolved addresses tried per destination */

typedef struct fb_proxy fb_proxy;

/* Starts serving listen_fd (a listening stream socket; ownership passes to the proxy, even on failure).
 * policy is borrowed and must outlive the proxy. */
int fb_proxy_start(int listen_fd, const fb_net_policy *policy, fb_proxy **out, fb_error *err);
/* The host's say per connection (for fnbox_call_options' network callback): called on the proxy thread
 * for each connection the policy allows, once resolved (address: the first allowed one, text form);
 * nonzero allows, 0 refuses (the log gets "denied by the host: <reason>"). It can only narrow the policy. */
typedef int (*fb_proxy_check)(void *ctx, const char *host, uint16_t port, const char *address, char *reason,
                              size_t reason_cap);
int fb_proxy_start_checked(int listen_fd, const fb_net_policy *policy, fb_proxy_check check, void *check_ctx,
                           fb_proxy **out, fb_error *err);
/* Stops the thread and closes every socket; the log stays readable. Idempotent; NULL is a no-op.
 * Call it once the sandbox is gone (no client is left anyway). */
void fb_proxy_stop(fb_proxy *p);
/* One connection the proxy allowed or refused. The strings point into the proxy (valid until
 * fb_proxy_free); "" when unknown. */
typedef struct fb_proxy_log_entry {
    const char *protocol;  /* "http", "connect", "socks5"; NULL when the client never got that far */
    const char *host;
    uint16_t port;         /* 0 when unknown */
    const char *address;   /* "" when refused before resolution */
    bool allowed;
    const char *reason;
    const char *error;     /* why an allowed connection could not be made, or "" */
    uint64_t up, down;     /* bytes relayed each way */
} fb_proxy_log_entry;
/* The i-th log entry, once stopped: true and *out, or false past the end (NULL p: none).
 * core/result.c renders them as the result's `network`. */
bool fb_proxy_log_at(const fb_proxy *p, size_t i, fb_proxy_log_entry *out);
size_t fb_proxy_log_dropped(const fb_proxy *p);
void fb_proxy_free(fb_proxy *p); /* stops first if needed */

/* The listening socket's hand-over, shaped as the sandbox's on_proxy callback (a plain function pointer,
 * sandbox/sandbox.h): set .proxy_listen, .on_proxy = fb_proxy_on_listen and .proxy_ctx = &call; after the
 * run, call.proxy (NULL if the sandbox never got that far) is the caller's to stop, read and free. */
typedef struct fb_proxy_call {
    const fb_net_policy *policy;
    fb_proxy_check check;   /* optional */
    void *check_ctx;
    fb_proxy *proxy;
} fb_proxy_call;
int fb_proxy_on_listen(void *ctx, int fd, fb_error *err);

/* The variables that point a function's HTTP clients at the proxy (NULL-terminated, static):
 * HTTP_PROXY, HTTPS_PROXY, http_proxy, https_proxy, ALL_PROXY (socks5h://, names resolved by the proxy),
 * all_proxy, NO_PROXY=, no_proxy=. */
extern const char *const fb_proxy_env[];

#endif
