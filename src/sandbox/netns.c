/* The sandbox's network namespace, set up from inside by init during sandbox set-up: the namespace starts
 * with a single interface, `lo`, down; init brings it up, opens the proxy's listening socket on it when
 * the call may reach the network, and the root's /etc/hosts names what lives there. Nothing else: no
 * route, no other interface. The host side (policy, proxy) is src/net/, which the sandbox never includes;
 * docs/internals/network.md. [child] code: no allocation. */
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sandbox/internal.h"
#include "util/defences.h"

const char fb_netns_hosts[] = "127.0.0.1\tlocalhost fnbox\n::1\tlocalhost ip6-localhost ip6-loopback\n";
const size_t fb_netns_hosts_len = sizeof fb_netns_hosts - 1;

static int loopback_up(fb_error *err)
{
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "socket for loopback");
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
    int rc = ioctl(s, SIOCGIFFLAGS, &ifr);
    if (rc == 0) {
        ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
        rc = ioctl(s, SIOCSIFFLAGS, &ifr);
    }
    int saved = errno;
    close(s);
    errno = saved;
    return rc < 0 ? fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "bring up loopback") : 0;
}

int fb_netns_up(fb_error *err)
{
    if (fb_defence_disabled("netns")) /* test builds: the host's network, whose lo is not ours */
        return 0;
    return loopback_up(err);
}

/* Loopback must be up to bind 127.0.0.1 (the kernel assigns it when lo comes up); init brings it up again
 * later (fb_netns_up), which is harmless. No SO_REUSEPORT: nothing in the sandbox can bind the same port
 * and steal connections. */
int fb_netns_proxy_listener(int *fd, fb_error *err)
{
    if (loopback_up(err) < 0)
        return -1;
    *fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (*fd < 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "proxy socket");
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(FB_SANDBOX_PROXY_PORT),
                              .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (bind(*fd, (const struct sockaddr *)&sin, sizeof sin) < 0 || listen(*fd, 64) < 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "proxy socket on 127.0.0.1:%d", FB_SANDBOX_PROXY_PORT);
    return 0;
}
