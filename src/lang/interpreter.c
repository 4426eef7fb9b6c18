/* What interpreted languages share: the runtime started on the harness (a driver's exec), the call input
 * the harness reads (its harness_input), and the fb_lang_exec helpers every driver's exec uses. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lang/lang.h"
#include "util/json.h"

int fb_lang_exec_add_env(fb_lang_exec *x, const char *kv, fb_error *err)
{
    size_t n = 0;
    while (x->env[n])
        n++;
    if (n >= FB_LANG_MAX_ENV - 1)
        return fb_set_error(err, FB_ERR_INTERNAL, E2BIG, "more than %d driver environment entries",
                            FB_LANG_MAX_ENV - 1);
    x->env[n] = kv;
    x->env[n + 1] = NULL;
    return 0;
}

int fb_lang_exec_add_file(fb_lang_exec *x, fb_lang_file file, fb_error *err)
{
    if (x->nfiles >= FB_LANG_MAX_FILES)
        return fb_set_error(err, FB_ERR_INTERNAL, E2BIG, "more than %d driver files", FB_LANG_MAX_FILES);
    x->files[x->nfiles++] = file;
    return 0;
}

void fb_lang_exec_free(fb_lang_exec *x)
{
    free(x->owned);
    *x = (fb_lang_exec){0};
}

/* argv: the runtime, its fixed arguments, the harness. */
static int interpreter_argv(const fb_lang_driver *d, const char *runtime, fb_lang_exec *out, fb_error *err)
{
    size_t a = 0;
    out->argv[a++] = runtime;
    for (const char *const *p = d->interpreter->args; *p; p++) {
        if (a >= FB_LANG_MAX_ARGV - 2)
            return fb_set_error(err, FB_ERR_INTERNAL, E2BIG, "%s driver: more than %d runtime arguments", d->name,
                                FB_LANG_MAX_ARGV - 3);
        out->argv[a++] = *p;
    }
    out->argv[a++] = d->interpreter->harness_path;
    out->argv[a] = NULL;
    return 0;
}

int fb_lang_interpreter_exec(const fb_lang_driver *d, const fb_lang_runnable *run, fb_lang_exec *out, fb_error *err)
{
    *out = (fb_lang_exec){0};
    if (interpreter_argv(d, run->runtime, out, err) < 0)
        return -1;
    for (const char *const *p = d->interpreter->env; *p; p++)
        if (fb_lang_exec_add_env(out, *p, err) < 0)
            return -1;
    size_t hlen = 0;
    const char *hsrc = d->harness_source(&hlen);
    out->inert_until_input = true; /* the user's code is in the input; harnesses start nothing before it */
    return fb_lang_exec_add_file(out, (fb_lang_file){.path = d->interpreter->harness_path, .data = hsrc, .len = hlen},
                                 err);
}

bool fb_lang_args_as_text(bool big_int, bool kwargs)
{
    (void)big_int, (void)kwargs;
    return true;
}

char *fb_lang_harness_input_with(const fb_lang_call *call, json_t *args, json_t *bigints, size_t *len)
{
    const fb_call_args *ca = call->args;
    json_t *in = json_object();
    json_object_set_new(in, "code", json_stringn(call->code, call->code_len));
    json_object_set_new(in, "functionName", call->function_name ? json_string(call->function_name) : json_null());
    json_object_set(in, "args", args);
    json_object_set(in, "kwargs", ca->kwargs);
    json_object_set_new(in, "undefined", ca->undefined ? json_incref(ca->undefined) : json_array());
    json_object_set_new(in, "bigints", bigints ? json_incref(bigints) : json_array());
    json_object_set_new(in, "workdir", json_string(call->workdir));
    if (call->stream)
        json_object_set_new(in, "stream", json_true());
    char *text = fb_json_dumps(in, JSON_COMPACT | JSON_ENCODE_ANY); /* the texts stay references */
    json_decref(in);
    if (text)
        *len = strlen(text);
    return text;
}

char *fb_lang_harness_input(const fb_lang_call *call, size_t *len)
{
    return fb_lang_harness_input_with(call, call->args->args, NULL, len);
}
