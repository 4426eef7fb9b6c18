/* Signature lists: freeing, lookup, and the small helpers both inference scanners share. */
#include "lang/signature.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/source_scan.h"

static void param_free(fb_param *p)
{
    free(p->name);
    free(p->default_text);
    free(p->annotation);
    for (size_t i = 0; i < p->nkeys; i++)
        free(p->keys[i]);
    free(p->keys);
    memset(p, 0, sizeof *p);
}

void fb_function_sig_free(fb_function_sig *sig)
{
    if (!sig)
        return;
    for (size_t i = 0; i < sig->nparams; i++)
        param_free(&sig->params[i]);
    free(sig->params);
    free(sig->name);
    free(sig->doc);
    free(sig->returns);
    memset(sig, 0, sizeof *sig);
}

void fb_sig_list_free(fb_sig_list *list)
{
    if (!list)
        return;
    for (size_t i = 0; i < list->nfuncs; i++)
        fb_function_sig_free(&list->funcs[i]);
    free(list->funcs);
    list->funcs = NULL;
    list->nfuncs = 0;
}

/* Both languages let a later top-level definition replace an earlier one of the same name, and the runtime
 * calls the later one, so the last match is the signature that applies. */
const fb_function_sig *fb_sig_list_find(const fb_sig_list *list, const char *name)
{
    if (!list || !name)
        return NULL;
    for (size_t i = list->nfuncs; i > 0; i--) {
        const fb_function_sig *f = &list->funcs[i - 1];
        if (f->name && strcmp(f->name, name) == 0)
            return f;
    }
    return NULL;
}

static bool is_private(const fb_function_sig *f)
{
    return f->name && f->name[0] == '_';
}

const fb_function_sig *fb_sig_list_choose(const fb_sig_list *list, bool skip_private, size_t *count, char *names,
                                          size_t size)
{
    bool any_public = false;
    for (size_t i = 0; i < list->nfuncs && skip_private; i++)
        any_public |= !is_private(&list->funcs[i]);
    skip_private &= any_public;
    const fb_function_sig *only = NULL;
    size_t n = 0, used = 0;
    if (size)
        names[0] = '\0';
    for (size_t i = 0; i < list->nfuncs; i++) {
        const fb_function_sig *f = &list->funcs[i];
        if (skip_private && is_private(f))
            continue;
        only = f;
        if (used < size)
            used += (size_t)snprintf(names + used, size - used, "%s%s", n ? ", " : "", f->name ? f->name : "?");
        n++;
    }
    *count = n;
    return n == 1 ? only : NULL;
}

/* ---- shared scanner helpers (source_scan.h) ---- */

void fb_scan_buf_append(fb_scan_buf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (!b->data || b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->data, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->data = p;
        b->cap = cap;
    }
    if (n)
        memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

char *fb_scan_buf_take(fb_scan_buf *b)
{
    if (!b->oom && !b->data)
        fb_scan_buf_append(b, "", 0);
    if (b->oom) {
        fb_scan_buf_free(b);
        return NULL;
    }
    char *s = b->data;
    memset(b, 0, sizeof *b);
    return s;
}

void fb_scan_buf_free(fb_scan_buf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

bool fb_scan_is_ident_byte(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c >= 0x80;
}

bool fb_scan_is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

char *fb_scan_dup(const char *s, size_t n)
{
    char *p = malloc(n + 1);
    if (!p)
        return NULL;
    if (n)
        memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *fb_scan_dup_trim(const char *s, size_t n)
{
    while (n > 0 && (fb_scan_is_space((unsigned char)s[0]) || s[0] == '\n')) {
        s++;
        n--;
    }
    while (n > 0 && (fb_scan_is_space((unsigned char)s[n - 1]) || s[n - 1] == '\n'))
        n--;
    return fb_scan_dup(s, n);
}

fb_param *fb_scan_add_param(fb_function_sig *sig, bool *over_cap)
{
    *over_cap = false;
    if (sig->nparams >= FB_SIG_MAX_PARAMS) {
        *over_cap = true;
        return NULL;
    }
    fb_param *p = realloc(sig->params, (sig->nparams + 1) * sizeof *p);
    if (!p)
        return NULL;
    sig->params = p;
    p = &sig->params[sig->nparams++];
    memset(p, 0, sizeof *p);
    return p;
}

int fb_scan_push_func(fb_sig_list *list, fb_function_sig *sig)
{
    if (list->nfuncs >= FB_SIG_MAX_FUNCS) {
        fb_function_sig_free(sig);
        return 1;
    }
    fb_function_sig *f = realloc(list->funcs, (list->nfuncs + 1) * sizeof *f);
    if (!f)
        return -1;
    list->funcs = f;
    list->funcs[list->nfuncs++] = *sig;
    memset(sig, 0, sizeof *sig);
    return 0;
}

int fb_scan_oom(fb_error *err)
{
    return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "signature inference");
}
