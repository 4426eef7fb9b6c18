/* The C driver: the system gcc compiles the user's code with a generated dispatcher (c_dispatch.c) inside a
 * sandbox (core/compile.c); the program then runs in the call's sandbox. */
#include "lang/c_dispatch.h"
#include "lang/lang.h"

static int c_generate(const char *code, size_t len, const char *function_name, char **src, size_t *src_len,
                      fb_error *err)
{
    return fb_c_generate(false, code, len, function_name, src, src_len, err);
}

/* The source arrives on fd 4 (made stdin), the program leaves on fd 3. -pipe: no temporaries in /tmp.
 * The runtime (src/harness/c_runtime.c) is compiled once into an object, so a call compiles only the user's
 * code and a short main: it keeps a cold call close to gcc's own compile + run. When gold is installed it
 * links (about 4 ms faster than ld.bfd on a small program, the LTO plugin skipped: nothing here is LTO) and
 * writes the program straight into the fd 3 pipe (gold can; ld.bfd seeks), which saves the `cat`. The
 * compile cache puts both linkers' identity in its key. */
#define FB_C_FLAGS "-x c -std=gnu17 -O2 -pipe -fdiagnostics-color=never"
#define FB_C_LINK "-x none /.fnbox/runtime.o -ljansson -lm"
static const fb_lang_compiler k_compiler = {
    .generate = c_generate,
    .script = "exec 0<&4 4<&-; if [ -x /usr/bin/ld.gold ]; then exec \"$0\" " FB_C_FLAGS
              " -fuse-ld=gold -fno-use-linker-plugin -o /dev/fd/3 - " FB_C_LINK "; fi; \"$0\" " FB_C_FLAGS
              " -o /tmp/fnbox_prog - " FB_C_LINK " && exec cat /tmp/fnbox_prog >&3",
    .runtime_source = fb_c_runtime_source,
    .runtime_script = "exec 0<&4 4<&-; \"$0\" " FB_C_FLAGS " -DFNBOX__FN= -c -o /tmp/fnbox_runtime.o - "
                      "&& exec cat /tmp/fnbox_runtime.o >&3",
};

static const char *const k_aliases[] = {NULL};
static const char *const k_runtimes[] = {"/usr/bin/gcc", "/usr/bin/cc", "/usr/local/bin/gcc", NULL};

const fb_lang_driver fb_lang_c = {
    .name = "c",
    .aliases = k_aliases,
    .runtimes = k_runtimes,
    .convention = "the function's C declaration",
    .package = "gcc libjansson-dev",
    .infer = fb_infer_c,
    .normalize = fb_normalize_c, /* positional by declaration; keywords name parameters */
    .compiler = &k_compiler,
    .exec = fb_c_exec,
    .harness_input = fb_c_call_input,
};
