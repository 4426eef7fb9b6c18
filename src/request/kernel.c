/* A session kernel's execute request: {code, timeout?, restart?}; anything else is refused by name, so a client
 * that sends a command's fields (language, args, env) learns they do not apply here. */
#include <errno.h>
#include <string.h>

#include "request/kernel.h"
#include "request/limits.h"
#include "request/request.h"
#include "util/json.h"

static const char *const k_fields[] = {"code", "timeout", "restart", NULL};

static int known_fields(json_t *root, fb_error *err)
{
    const char *key;
    json_t *v;
    json_object_foreach(root, key, v) {
        size_t i = 0;
        while (k_fields[i] && strcmp(k_fields[i], key) != 0)
            i++;
        if (!k_fields[i])
            return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0,
                                "%s: not a field of a kernel execute (it takes code, timeout, restart)", key);
    }
    return 0;
}

static int check_code(const json_t *code, fb_error *err)
{
    if (!code)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, "code: missing (the code to run in the kernel)");
    if (!json_is_string(code))
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, "code: must be a string");
    if (json_string_length(code) > FB_MAX_CODE_BYTES)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, E2BIG, "code: %zu bytes is more than the maximum of %llu",
                            json_string_length(code), (unsigned long long)FB_MAX_CODE_BYTES);
    return 0;
}

static int check_restart(const json_t *restart, fb_error *err)
{
    if (restart && !json_is_boolean(restart))
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, "restart: must be true or false");
    return 0;
}

int fb_kernel_request_parse(const char *text, size_t len, fb_kernel_request *out, fb_error *err)
{
    memset(out, 0, sizeof *out);
    if (len > FB_MAX_REQUEST_BYTES)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, E2BIG, "request: %zu bytes is more than the maximum of %llu",
                            len, (unsigned long long)FB_MAX_REQUEST_BYTES);
    json_error_t jerr;
    json_t *root = fb_json_loadb(text ? text : "", len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
    if (!root)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, "request: malformed JSON at line %d, column %d: %s",
                            jerr.line, jerr.column, jerr.text);
    out->root = root;
    json_t *code = json_object_get(root, "code");
    int rc = json_is_object(root) ? known_fields(root, err)
                                  : fb_set_error(err, FB_ERR_INVALID_REQUEST, 0,
                                                 "request: a JSON object {code, timeout?, restart?} was expected");
    if (rc == 0)
        rc = check_code(code, err);
    if (rc == 0)
        rc = fb_request_timeout_parse(json_object_get(root, "timeout"), &out->timeout_s, err);
    if (rc == 0)
        rc = check_restart(json_object_get(root, "restart"), err);
    if (rc < 0) {
        fb_kernel_request_free(out);
        return -1;
    }
    out->code = json_string_value(code);
    out->code_len = json_string_length(code);
    out->restart = json_is_true(json_object_get(root, "restart"));
    return 0;
}

void fb_kernel_request_free(fb_kernel_request *r)
{
    json_decref(r->root);
    r->root = NULL;
}
