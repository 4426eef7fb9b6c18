/* The C++ driver: like C (c.c), with g++ and the C++ converters of src/harness/cpp_prelude.hpp. */
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
};

static const char *const k_aliases[] = {"c++", "cxx", NULL};
static const char *const k_runtimes[] = {"/usr/bin/g++", "/usr/bin/c++", "/usr/local/bin/g++", NULL};

const fb_lang_driver fb_lang_cpp = {
    .name = "cpp",
    .aliases = k_aliases,
    .runtimes = k_runtimes,
    .convention = "the function's C++ declaration",
    .package = "g++ libjansson-dev",
    .infer = fb_infer_cpp,
    .normalize = fb_normalize_c, /* as C's; C++ default arguments are has_default parameters */
    .compiler = &k_compiler,
    .exec = fb_c_exec,
    .harness_input = fb_c_call_input,
};
