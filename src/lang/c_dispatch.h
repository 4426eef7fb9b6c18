/* C and C++ dispatch: the whole program fnbox compiles for one call = the user's code + a generated main
 * that reads the call input (fd 4), converts each JSON argument to the declared parameter type, calls the
 * function, and writes the result on fd 3 (docs/internals/harness-protocol.md). Arguments stay data: the
 * generated source depends only on the code and the function's declaration, never on argument values, so
 * one compiled program serves every call of the same code. */
#ifndef FB_C_DISPATCH_H
#define FB_C_DISPATCH_H
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "lang/lang.h"
#include "lang/signature.h"
#include "util/error.h"

/* Is `type` (canonical text, as c_infer.c stores it) a type the dispatcher converts? `is_return` allows
 * void. C++ adds std::string, std::vector<T>, std::map<std::string, T> and references. */
bool fb_c_type_supported(const char *type, bool cpp, bool is_return);

/* Builds the program source for function_name (NULL: error). Errors: "FunctionNotFound" (no definition
 * of that name), "UnsupportedType" (naming the parameter and its type; nothing is compiled). On success
 * *src (caller frees) holds NUL-terminated text of *src_len bytes. */
int fb_c_generate(bool cpp, const char *code, size_t code_len, const char *function_name, char **src,
                  size_t *src_len, fb_error *err);

/* fb_infer_cpp, but a function inside a namespace is named by its qualified name (`a::b::f`), the name
 * the generated main calls (c_infer.c). */
int fb_infer_cpp_qualified(const char *code, size_t len, fb_sig_list *out, fb_error *err);

/* The C runtime (JSON converters, result writer): one translation unit, compiled once per compiler with
 * -DFNBOX__FN= into an object every C program links (so a C call compiles only the user's code and a short
 * main). Static storage. */
const char *fb_c_runtime_source(size_t *len);

/* The exec of C and C++: the program compiled for the call, run as /.fnbox/prog (no interpreter, no
 * harness file: the harness is compiled in). */
int fb_c_exec(const fb_lang_driver *d, const fb_lang_runnable *run, fb_lang_exec *out, fb_error *err);

/* The harness_input of C and C++: {"args": [...]}, where integers beyond 64 bits (which fnbox carries as
 * marked bignums, and the program's jansson cannot parse) are sent as decimal strings. Only the arguments:
 * the code and the function are compiled in. Caller frees; NULL on ENOMEM. */
char *fb_c_call_input(const fb_lang_call *call, size_t *len);

#endif
