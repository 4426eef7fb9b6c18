/* The stop signals (SIGINT, SIGTERM, SIGHUP) of the verbs that outlive a signal: blocked, and read from a
 * signalfd the verb watches (cli.h). A sandboxed program gets its own clean mask and dispositions
 * (sandbox/spawn.c). */
#include <signal.h>
#include <sys/signalfd.h>

#include "cli/cli.h"

int cli_stop_signal_fd(int flags)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
        return -1;
    return signalfd(-1, &set, SFD_CLOEXEC | flags);
}
