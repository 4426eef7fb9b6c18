/* C and C++ dispatch (c_dispatch.h): the program fnbox compiles = the user's code + a fixed prelude of JSON
 * converters + a main generated from the function's declaration. The prelude is a harness file of its own
 * (src/harness/c_runtime.c, plain C and also valid C++; embedded by embed.S): a C program links it as an
 * object compiled once (core/compile.c caches it) and sees its declarations (c_runtime.h); a C++ program
 * holds its text, with its functions static, and the template converters of cpp_prelude.hpp for
 * std::string, std::vector and std::map, which also map a thrown std::exception to an error with its
 * demangled type name and what(). */
#include "lang/c_dispatch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/harness.h"
#include "util/json.h"

static bool fb_c_type_supported_n(const char *s, size_t n, bool cpp, bool is_return);

typedef enum ckind {
    K_UNSUPPORTED = 0, K_VOID, K_BOOL, K_SINT, K_UINT, K_CHAR, K_FLOAT, K_DOUBLE, K_CSTR, K_MSTR, K_STRING,
    K_VECTOR, K_MAP,
} ckind;

static bool eq(const char *s, size_t n, const char *word)
{
    return strlen(word) == n && memcmp(s, word, n) == 0;
}

static bool starts(const char *s, size_t n, const char *prefix)
{
    size_t p = strlen(prefix);
    return n >= p && memcmp(s, prefix, p) == 0;
}

/* Classifies s[0..n) (canonical text). */
static ckind classify(const char *s, size_t n, bool cpp)
{
    if (cpp && n >= 2 && s[n - 1] == '&') { /* T& / T&& / const T& */
        n -= (n >= 2 && s[n - 2] == '&') ? 2 : 1;
    }
    if (n >= 6 && s[n - 6] == '*' && memcmp(s + n - 5, "const", 5) == 0)
        n -= 5; /* `char *const p`: the pointer itself is const */
    bool is_const = false;
    while (starts(s, n, "const ")) {
        s += 6;
        n -= 6;
        is_const = true;
    }
    while (n > 6 && memcmp(s + n - 6, " const", 6) == 0 && s[n - 7] != '*') {
        n -= 6; /* `char const` */
        is_const = true;
    }
    if (n > 0 && s[n - 1] == '*') {
        size_t b = n - 1;
        while (n > 0 && starts(s, b, "const ")) {
            s += 6;
            b -= 6;
            is_const = true;
        }
        if (b > 6 && memcmp(s + b - 6, " const", 6) == 0) {
            b -= 6;
            is_const = true;
        }
        if (eq(s, b, "char"))
            return is_const ? K_CSTR : K_MSTR;
        return K_UNSUPPORTED;
    }
    if (cpp) {
        if (starts(s, n, "std::"))
            s += 5, n -= 5;
        if (eq(s, n, "string"))
            return K_STRING;
        if ((starts(s, n, "vector<") || starts(s, n, "map<")) && s[n - 1] == '>') {
            bool vec = s[0] == 'v';
            size_t a = vec ? 7 : 4, e = n - 1;
            if (vec)
                return fb_c_type_supported_n(s + a, e - a, true, false) ? K_VECTOR : K_UNSUPPORTED;
            int depth = 0;
            for (size_t i = a; i < e; i++) {
                if (s[i] == '<')
                    depth++;
                else if (s[i] == '>')
                    depth--;
                else if (s[i] == ',' && depth == 0) {
                    if (!eq(s + a, i - a, "std::string") && !eq(s + a, i - a, "string"))
                        return K_UNSUPPORTED;
                    return fb_c_type_supported_n(s + i + 1, e - i - 1, true, false) ? K_MAP : K_UNSUPPORTED;
                }
            }
            return K_UNSUPPORTED;
        }
    }
    static const char *const k_signed[] = {"int8_t", "int16_t", "int32_t", "int64_t", "intmax_t", "intptr_t",
                                           "ssize_t", "ptrdiff_t", "int_least8_t", "int_least16_t",
                                           "int_least32_t", "int_least64_t", "int_fast8_t", "int_fast16_t",
                                           "int_fast32_t", "int_fast64_t", NULL};
    static const char *const k_unsigned[] = {"uint8_t", "uint16_t", "uint32_t", "uint64_t", "uintmax_t",
                                             "uintptr_t", "size_t", "uint_least8_t", "uint_least16_t",
                                             "uint_least32_t", "uint_least64_t", "uint_fast8_t", "uint_fast16_t",
                                             "uint_fast32_t", "uint_fast64_t", NULL};
    for (const char *const *w = k_signed; *w; w++)
        if (eq(s, n, *w))
            return K_SINT;
    for (const char *const *w = k_unsigned; *w; w++)
        if (eq(s, n, *w))
            return K_UINT;
    if (eq(s, n, "void"))
        return K_VOID;
    if (eq(s, n, "bool") || eq(s, n, "_Bool"))
        return K_BOOL;
    if (eq(s, n, "float"))
        return K_FLOAT;
    if (eq(s, n, "double") || eq(s, n, "long double"))
        return K_DOUBLE;
    /* int family: any order of signed/unsigned/short/long/int/char */
    int nsigned = 0, nunsigned = 0, nshort = 0, nlong = 0, nint = 0, nchar = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && s[j] != ' ')
            j++;
        if (eq(s + i, j - i, "signed"))
            nsigned++;
        else if (eq(s + i, j - i, "unsigned"))
            nunsigned++;
        else if (eq(s + i, j - i, "short"))
            nshort++;
        else if (eq(s + i, j - i, "long"))
            nlong++;
        else if (eq(s + i, j - i, "int"))
            nint++;
        else if (eq(s + i, j - i, "char"))
            nchar++;
        else
            return K_UNSUPPORTED;
        i = j + 1;
    }
    if (n == 0 || nsigned + nunsigned > 1 || nint > 1 || nchar > 1 || nlong > 2 || (nshort && nlong) ||
        (nchar && (nint || nshort || nlong)))
        return K_UNSUPPORTED;
    if (nchar && !nsigned && !nunsigned)
        return K_CHAR;
    return nunsigned ? K_UINT : K_SINT;
}

static bool fb_c_type_supported_n(const char *s, size_t n, bool cpp, bool is_return)
{
    ckind k = classify(s, n, cpp);
    return k != K_UNSUPPORTED && (is_return || k != K_VOID);
}

bool fb_c_type_supported(const char *type, bool cpp, bool is_return)
{
    return type && fb_c_type_supported_n(type, strlen(type), cpp, is_return);
}

/* A C string literal holding s (names and type texts come from the user's code). */
static void put_lit(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20 || c >= 0x7f)
            fprintf(f, "\\%03o", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

/* The type text with a leading `const ` removed (for sizeof in the generated C). */
static const char *strip_const(const char *t)
{
    while (strncmp(t, "const ", 6) == 0)
        t += 6;
    return t;
}

static void gen_c_arg(FILE *f, size_t i, const fb_param *p)
{
    const char *t = p->annotation;
    char get[64];
    snprintf(get, sizeof get, "fnbox__arg(fnbox__args, %zu)", i);
    switch (classify(t, strlen(t), false)) {
    case K_SINT:
    case K_UINT:
        fprintf(f, "    %s fnbox__a%zu = fnbox__get_%s(%s, (int)(sizeof(%s) * CHAR_BIT), ",
                classify(t, strlen(t), false) == K_SINT ? "long long" : "unsigned long long", i,
                classify(t, strlen(t), false) == K_SINT ? "i64" : "u64", get, strip_const(t));
        break;
    case K_BOOL:
        fprintf(f, "    int fnbox__a%zu = fnbox__get_bool(%s, ", i, get);
        break;
    case K_CHAR:
        fprintf(f, "    char fnbox__a%zu = fnbox__get_char(%s, ", i, get);
        break;
    case K_FLOAT:
    case K_DOUBLE:
        fprintf(f, "    double fnbox__a%zu = fnbox__get_f(%s, ", i, get);
        break;
    default: /* K_CSTR, K_MSTR */
        fprintf(f, "    char *fnbox__a%zu = fnbox__get_str(%s, ", i, get);
        break;
    }
    put_lit(f, p->name);
    fputs(", ", f);
    put_lit(f, t);
    fputs(");\n", f);
}

static void gen_call(FILE *f, const fb_function_sig *sig, size_t nargs)
{
    fprintf(f, "%s(", sig->name);
    for (size_t i = 0; i < nargs; i++)
        fprintf(f, "%sfnbox__a%zu", i ? ", " : "", i);
    fputs(")", f);
}

static void gen_c_main(FILE *f, const fb_function_sig *sig)
{
    fputs("int main(void)\n{\n", f);
    fprintf(f, "    json_t *fnbox__args = fnbox__read_args(%zu, %zu, ", sig->nparams, sig->nparams);
    put_lit(f, sig->name);
    fputs(");\n", f);
    for (size_t i = 0; i < sig->nparams; i++)
        gen_c_arg(f, i, &sig->params[i]);
    fputs("    fnbox__free_args();\n    fnbox__buf fnbox__out = {0, 0, 0, 1};\n    ", f);
    switch (classify(sig->returns, strlen(sig->returns), false)) {
    case K_VOID:
        gen_call(f, sig, sig->nparams);
        fputs(";\n    fnbox__adds(&fnbox__out, \"null\");\n", f);
        break;
    case K_SINT:
        fputs("long long fnbox__r = (long long)", f);
        gen_call(f, sig, sig->nparams);
        fputs(";\n    fnbox__put_i64(&fnbox__out, fnbox__r);\n", f);
        break;
    case K_UINT:
        fputs("unsigned long long fnbox__r = (unsigned long long)", f);
        gen_call(f, sig, sig->nparams);
        fputs(";\n    fnbox__put_u64(&fnbox__out, fnbox__r);\n", f);
        break;
    case K_BOOL:
        fputs("int fnbox__r = ", f);
        gen_call(f, sig, sig->nparams);
        fputs(" ? 1 : 0;\n    fnbox__put_bool(&fnbox__out, fnbox__r);\n", f);
        break;
    case K_CHAR:
        fputs("char fnbox__r = ", f);
        gen_call(f, sig, sig->nparams);
        fputs(";\n    fnbox__put_char(&fnbox__out, fnbox__r);\n", f);
        break;
    case K_FLOAT:
    case K_DOUBLE:
        fputs("double fnbox__r = ", f);
        gen_call(f, sig, sig->nparams);
        fprintf(f, ";\n    fnbox__put_f(&fnbox__out, fnbox__r, %d);\n",
                classify(sig->returns, strlen(sig->returns), false) == K_FLOAT);
        break;
    default: /* strings */
        fputs("const char *fnbox__r = ", f);
        gen_call(f, sig, sig->nparams);
        fputs(";\n    fnbox__put_str(&fnbox__out, fnbox__r);\n", f);
        break;
    }
    fputs("    fnbox__finish_ok(&fnbox__out);\n    return 0;\n}\n", f);
}

static void gen_cpp_main(FILE *f, const fb_function_sig *sig)
{
    size_t required = 0;
    for (size_t i = 0; i < sig->nparams; i++)
        if (!sig->params[i].has_default)
            required = i + 1;
    bool is_void = classify(sig->returns, strlen(sig->returns), true) == K_VOID;
    fputs("int main()\n{\n", f);
    fprintf(f, "    json_t *fnbox__args = fnbox__read_args(%zu, %zu, ", required, sig->nparams);
    put_lit(f, sig->name);
    fputs(");\n    size_t fnbox__n = json_array_size(fnbox__args);\n    (void)fnbox__n;\n", f);
    for (size_t i = 0; i < sig->nparams; i++) {
        const fb_param *p = &sig->params[i];
        fprintf(f, "    std::remove_cv_t<std::remove_reference_t<%s>> fnbox__a%zu{};\n", p->annotation, i);
        fprintf(f, "    if (fnbox__n > %zu)\n        fnbox__get(json_array_get(fnbox__args, %zu), fnbox__a%zu, ", i, i, i);
        put_lit(f, p->name);
        fputs(", ", f);
        put_lit(f, p->annotation);
        fputs(");\n", f);
    }
    fputs("    fnbox__free_args();\n    fnbox__buf fnbox__out = {0, 0, 0, 1};\n    try {\n        switch (fnbox__n) {\n",
          f);
    for (size_t k = required; k <= sig->nparams; k++) {
        fprintf(f, "        case %zu: {\n            ", k);
        if (is_void) {
            gen_call(f, sig, k);
            fputs(";\n            fnbox__adds(&fnbox__out, \"null\");\n", f);
        } else {
            fputs("auto fnbox__r = ", f);
            gen_call(f, sig, k);
            fputs(";\n            fnbox__put(&fnbox__out, fnbox__r);\n", f);
        }
        fputs("            break;\n        }\n", f);
    }
    fputs("        }\n"
          "    } catch (const std::exception &fnbox__e) {\n        fnbox__exception(fnbox__e);\n"
          "    } catch (...) {\n        fnbox__unknown_exception();\n    }\n"
          "    fnbox__finish_ok(&fnbox__out);\n    return 0;\n}\n",
          f);
}

static const fb_function_sig k_ambiguous;

/* The definition functionName names: `f` is `f` or `ns::f` (functionName is a plain name). The last one
 * wins among overloads of one qualified name, as fb_sig_list_find; &k_ambiguous when namespaces differ. */
static const fb_function_sig *find_function(const fb_sig_list *sigs, const char *name)
{
    const fb_function_sig *found = NULL;
    size_t n = strlen(name);
    for (size_t i = 0; i < sigs->nfuncs; i++) {
        const char *q = sigs->funcs[i].name;
        size_t l = q ? strlen(q) : 0;
        if (!q || l < n || strcmp(q + l - n, name) != 0 || (l > n && (l < n + 2 || memcmp(q + l - n - 2, "::", 2) != 0)))
            continue;
        if (found && strcmp(found->name, q) != 0)
            return &k_ambiguous;
        found = &sigs->funcs[i];
    }
    return found;
}

int fb_c_generate(bool cpp, const char *code, size_t code_len, const char *function_name, char **src,
                  size_t *src_len, fb_error *err)
{
    *src = NULL;
    *src_len = 0;
    const char *lang = cpp ? "C++" : "C";
    if (!function_name)
        return fb_set_error(err, FB_ERR_FUNCTION_NOT_FOUND, 0,
                            "%s code must define a function to call (there is no body mode for %s)", lang, lang);
    if (memchr(code, '\0', code_len))
        return fb_set_error(err, FB_ERR_COMPILE, 0, "code: contains a NUL byte");
    fb_sig_list sigs = {0};
    if ((cpp ? fb_infer_cpp_qualified : fb_infer_c)(code, code_len, &sigs, err) < 0)
        return -1;
    int rc = -1;
    const fb_function_sig *sig = find_function(&sigs, function_name);
    if (!sig) {
        fb_set_error(err, FB_ERR_FUNCTION_NOT_FOUND, 0, "functionName: no definition of %s() found in the %s code",
                     function_name, lang);
        goto done;
    }
    if (sig == &k_ambiguous) {
        fb_set_error(err, FB_ERR_AMBIGUOUS_FUNCTION, 0,
                     "functionName: %s() is defined in more than one namespace; fnbox calls a function by its "
                     "plain name, so give the one to call a unique name", function_name);
        goto done;
    }
    for (size_t i = 0; i < sig->nparams; i++) {
        const fb_param *p = &sig->params[i];
        if (p->kind == FB_PARAM_VAR_POSITIONAL || !fb_c_type_supported(p->annotation, cpp, false)) {
            fb_set_error(err, FB_ERR_UNSUPPORTED_TYPE, 0,
                         "%s(): parameter '%s' has type '%s', which fnbox cannot pass from JSON (supported: "
                         "integers, bool, float, double, char, const char*/char*%s)",
                         sig->name, p->name, p->annotation,
                         cpp ? ", std::string, std::vector<T>, std::map<std::string, T>" : "");
            goto done;
        }
    }
    if (!fb_c_type_supported(sig->returns, cpp, true)) {
        fb_set_error(err, FB_ERR_UNSUPPORTED_TYPE, 0,
                     "%s(): the return type '%s' cannot be converted to JSON by fnbox", sig->name, sig->returns);
        goto done;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) {
        fb_set_error(err, FB_ERR_OUT_OF_MEMORY, errno, "open_memstream");
        goto done;
    }
    const char *file = cpp ? "user_code.cpp" : "user_code.c";
    fprintf(f, "#line 1 \"%s\"\n", file);
    fwrite(code, 1, code_len, f);
    /* the generated part gets its own file name, so a diagnostic in it cannot be mistaken for the user's */
    fprintf(f, "\n#line 1 \"fnbox_main.%s\"\n", cpp ? "cpp" : "c");
    if (cpp) {
        fputs("#define FNBOX__FN static\n", f);
        fwrite(fb_harness_c_runtime, 1, (size_t)fb_harness_c_runtime_len, f);
        fwrite(fb_harness_cpp_prelude, 1, (size_t)fb_harness_cpp_prelude_len, f);
        gen_cpp_main(f, sig);
    } else {
        fwrite(fb_harness_c_runtime_decls, 1, (size_t)fb_harness_c_runtime_decls_len, f);
        gen_c_main(f, sig);
    }
    if (fclose(f) != 0 || !text) {
        free(text);
        fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "generating the %s program", lang);
        goto done;
    }
    *src = text;
    *src_len = len;
    rc = 0;
done:
    fb_sig_list_free(&sigs);
    return rc;
}

const char *fb_c_runtime_source(size_t *len)
{
    *len = (size_t)fb_harness_c_runtime_len;
    return fb_harness_c_runtime;
}

/* Marked bignums (util/json.h) become plain strings; everything else is shared. */
static json_t *plain(json_t *v)
{
    const char *big = fb_json_bignum(v);
    if (big)
        return json_string(big);
    if (json_is_array(v)) {
        json_t *a = json_array();
        for (size_t i = 0; a && i < json_array_size(v); i++)
            if (json_array_append_new(a, plain(json_array_get(v, i))) < 0) {
                json_decref(a);
                return NULL;
            }
        return a;
    }
    if (json_is_object(v)) {
        json_t *o = json_object();
        const char *key;
        json_t *child;
        json_object_foreach(v, key, child) {
            if (!o || json_object_set_new(o, key, plain(child)) < 0) {
                json_decref(o);
                return NULL;
            }
        }
        return o;
    }
    return json_incref(v);
}

char *fb_c_call_input(const fb_lang_call *call, size_t *len)
{
    json_t *in = json_object();
    json_t *a = call->args->args ? plain(call->args->args) : json_array();
    char *text = NULL;
    if (in && a && json_object_set_new(in, "args", a) == 0) {
        a = NULL;
        if (!call->stream || json_object_set_new(in, "stream", json_true()) == 0)
            text = json_dumps(in, JSON_COMPACT);
    }
    json_decref(a);
    json_decref(in);
    if (text)
        *len = strlen(text);
    return text;
}

int fb_c_exec(const fb_lang_driver *d, const fb_lang_runnable *run, fb_lang_exec *out, fb_error *err)
{
    static const char k_prog[] = "/.fnbox/prog";
    *out = (fb_lang_exec){.argv = {k_prog, NULL}};
    return fb_lang_exec_add_file(out, (fb_lang_file){.path = k_prog, .data = run->program, .len = run->program_len,
                                                     .executable = true}, err);
}
