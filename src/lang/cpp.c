/* The C++ driver: like C (c.c), with g++ and the C++ converters of c_dispatch.c. */
#include "lang/c_dispatch.h"
#include "lang/lang.h"

static int cpp_generate(const char *code, size_t len, const char *function_name, char **src, size_t *src_len,
                        fb_error *err)
{
    return fb_c_generate(true, code, len, function_name, src, src_len, err);
}

/* As in c.c: gold, when installed, links and writes the program straight into the fd 3 pipe. */
#define FB_CPP_FLAGS "-x c++ -std=gnu++17 -O2 -pipe -fdiagnostics-color=never"
static const fb_lang_compiler k_compiler = {
    .generate = cpp_generate,
    .script = "exec 0<&4 4<&-; if [ -x /usr/bin/ld.gold ]; then exec \"$0\" " FB_CPP_FLAGS
              " -fuse-ld=gold -fno-use-linker-plugin -o /dev/fd/3 - -ljansson -lm; fi; \"$0\" " FB_CPP_FLAGS
              " -o /tmp/fnbox_prog - -ljansson -lm && exec cat /tmp/fnbox_prog >&3",
    .call_input = fb_c_call_input,
};

static const char *const k_aliases[] = {"c++", "cxx", NULL};
static const char *const k_runtimes[] = {"/usr/bin/g++", "/usr/bin/c++", "/usr/local/bin/g++", NULL};
static const char *const k_none[] = {NULL};

const fb_lang_driver fb_lang_cpp = {
    .name = "cpp",
    .aliases = k_aliases,
    .runtimes = k_runtimes,
    .runtime_args = k_none,
    .env = k_none,
    .arg_style = FB_ARGS_RUBY, /* positional; C++ default arguments are has_default parameters */
    .infer = fb_infer_cpp,
    .convention = "the function's C++ declaration",
    .package = "g++ libjansson-dev",
    .compiler = &k_compiler,
};
