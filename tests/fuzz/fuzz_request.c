/* Fuzz target: a whole request, as `fnbox call` reads it, through every step that runs on the host before
 * anything is sandboxed: fb_request_parse (both shapes, files, mount + permissions), then, as
 * fnbox_call does, fb_plan_call (inference, schema, strict validation, argument normalization), for
 * C/C++ the source generation, and the driver's call input. Input: the request bytes, unchanged. */
#include "fuzz_common.h"

#include "request/request.h"
#include "lang/plan.h"

static void check_error(const fb_error *err, const char *step)
{
    FUZZ_CHECK(fb_error_type(err)[0] != '\0', "%s failed without an error type", step);
    FUZZ_CHECK(err->message[0] != '\0', "%s failed (%s) without a message", step, fb_error_type(err));
}

static void plan_and_generate(const fb_request *req)
{
    fb_plan_input pin = {.lang = req->lang, .code = req->code, .code_len = req->code_len,
                         .function_name = req->function_name, .schema = req->schema, .args = req->args,
                         .kwargs = req->kwargs};
    fb_call_plan plan;
    fb_error err = {0};
    if (fb_plan_call(&pin, &plan, &err) < 0) {
        check_error(&err, "fb_plan_call");
        FUZZ_CHECK(!plan.function_name && !plan.args.args, "a failed plan left data behind");
        return;
    }
    FUZZ_CHECK(plan.signature_source != NULL, "no signature source");
    FUZZ_CHECK(json_is_array(plan.args.args) && json_is_object(plan.args.kwargs) &&
                   json_is_array(plan.args.undefined), "normalized arguments of the wrong type");
    /* What the harness receives: the arguments written back with big numbers verbatim. */
    char *text = fb_json_dumps(plan.args.args, JSON_COMPACT | JSON_ENCODE_ANY);
    FUZZ_CHECK(text != NULL, "fb_json_dumps of the arguments failed");
    free(text);
    const fb_lang_compiler *cc = req->lang->compiler;
    if (cc) {
        char *src = NULL;
        size_t src_len = 0;
        fb_error gerr = {0};
        if (cc->generate(req->code, req->code_len, plan.function_name, &src, &src_len, &gerr) == 0) {
            FUZZ_CHECK(src && strlen(src) == src_len, "generated source length");
            free(src);
        } else {
            check_error(&gerr, "generate");
        }
    }
    fb_lang_call call = {.code = req->code, .code_len = req->code_len, .function_name = plan.function_name,
                         .args = &plan.args, .workdir = req->workdir};
    size_t in_len = 0;
    char *input = req->lang->harness_input(&call, &in_len);
    FUZZ_CHECK(input != NULL && in_len > 0, "harness_input failed");
    free(input);
    fb_call_plan_free(&plan);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fb_request req;
    fb_error err = {0};
    if (fb_request_parse((const char *)data, size, &req, &err) < 0) {
        check_error(&err, "fb_request_parse");
        FUZZ_CHECK(!req.root && !req.args && !req.kwargs && !req.mount, "a failed parse left data behind");
    } else {
        FUZZ_CHECK(req.root && req.lang && req.code, "parsed request without language or code");
        FUZZ_CHECK(json_is_array(req.args) && json_is_object(req.kwargs), "args/kwargs of the wrong type");
        FUZZ_CHECK(req.timeout_s > 0 && req.timeout_s <= 3600, "timeout %g", req.timeout_s);
        FUZZ_CHECK(req.workdir && req.workdir[0] == '/', "workdir");
        FUZZ_CHECK(!req.files || json_is_object(req.files), "files not an object");
        FUZZ_CHECK(!req.mount || (req.mount->rules && req.mount->ndirs > 0), "mount without rules or dirs");
        plan_and_generate(&req);
    }
    fb_request_free(&req); /* as fnbox_call does after a failed parse too */
    return 0;
}
