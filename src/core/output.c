#include "core/output.h"

#include <stdlib.h>
#include <string.h>

#include "util/defences.h"
#include "util/utf8.h"

static const char *const k_names[] = {"stdout", "stderr"};

void fb_output_init(fb_output *o, fnbox_output_fn fn, void *ctx, uint64_t stdout_cap, uint64_t stderr_cap)
{
    *o = (fb_output){.fn = fn, .ctx = ctx};
    bool uncapped = fb_defence_disabled("output-limit"); /* test builds: core/result.c cuts nothing either */
    o->stream[0].left = uncapped ? UINT64_MAX : stdout_cap;
    o->stream[1].left = uncapped ? UINT64_MAX : stderr_cap;
}

/* How many of the n bytes end on a character boundary: all of them, unless the last character started
 * (its lead byte among the last three) is not complete yet. An invalid byte is a boundary of its own. */
static size_t boundary(const unsigned char *p, size_t n)
{
    for (size_t back = 1; back <= 3 && back <= n; back++) {
        unsigned char c = p[n - back];
        if ((c & 0xC0) == 0x80)
            continue; /* a continuation byte: its lead is further back */
        size_t want = c >= 0xF0 && c <= 0xF7 ? 4 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xC0 && c <= 0xDF ? 2 : 1;
        return want > back ? n - back : n;
    }
    return n;
}

static void tell(fb_output *o, int i, const unsigned char *p, size_t n)
{
    if (n == 0)
        return;
    size_t clean_len = 0;
    char *clean = fb_utf8_sanitize((const char *)p, n, &clean_len);
    if (!clean) {
        o->failed = true;
        return;
    }
    o->fn(o->ctx, k_names[i], clean, clean_len);
    free(clean);
}

void fb_output_chunk(void *ctx, int stream, const char *data, size_t len)
{
    fb_output *o = ctx;
    if (o->failed || (stream != 1 && stream != 2))
        return;
    fb_output_stream *s = &o->stream[stream - 1];
    size_t take = len < s->left ? len : (size_t)s->left;
    s->left -= take;
    if (take == 0)
        return;
    unsigned char *buf = malloc(s->ncarry + take);
    if (!buf) {
        o->failed = true;
        return;
    }
    memcpy(buf, s->carry, s->ncarry);
    memcpy(buf + s->ncarry, data, take);
    size_t n = s->ncarry + take, whole = boundary(buf, n);
    s->ncarry = n - whole;
    memcpy(s->carry, buf + whole, s->ncarry);
    tell(o, stream - 1, buf, whole);
    free(buf);
}

void fb_output_finish(fb_output *o)
{
    for (int i = 0; i < 2 && !o->failed; i++) {
        tell(o, i, o->stream[i].carry, o->stream[i].ncarry);
        o->stream[i].ncarry = 0;
    }
}
