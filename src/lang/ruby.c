/* The Ruby driver: CRuby from the system, started without RubyGems (loaded on demand by the harness). */
#include "harness/harness.h"
#include "lang/lang.h"

static const char *ruby_kernel(size_t *len)
{
    *len = (size_t)fb_harness_ruby_kernel_len;
    return fb_harness_ruby_kernel;
}

static const char *ruby_harness(size_t *len)
{
    *len = (size_t)fb_harness_ruby_len;
    return fb_harness_ruby;
}

static const char *const k_aliases[] = {"rb", NULL};
static const char *const k_runtimes[] = {"/usr/bin/ruby", "/usr/local/bin/ruby", NULL};
/* --disable-gems: RubyGems costs ~30 ms of a ~40 ms `ruby -e 1` (Ruby 3.1); the harness loads it on the first
 * failing `require`, so installed gems still work. RUBYOPT is emptied so no -r or -W reaches the runtime. */
static const char *const k_args[] = {"--disable-gems", NULL};
static const char *const k_env[] = {"RUBYOPT=", NULL};
static const fb_lang_interpreter k_interpreter = {.args = k_args, .env = k_env,
                                                  .harness_path = "/.fnbox/harness.rb"};

const fb_lang_driver fb_lang_ruby = {
    .name = "ruby",
    .aliases = k_aliases,
    .runtimes = k_runtimes,
    .convention = "def f(*args, **kwargs)",
    .package = "ruby",
    .infer = fb_infer_ruby,
    .underscore_private = true,
    .normalize = fb_normalize_ruby,
    .args_as_text = fb_lang_args_as_text,
    /* wrong number of arguments, unknown keyword */
    .arg_errors = {.count = "ArgumentError", .name = "ArgumentError"},
    .exec = fb_lang_interpreter_exec,
    .interpreter = &k_interpreter,
    .harness_source = ruby_harness,
    .kernel_source = ruby_kernel,
    .kernel_file = "kernel.rb",
    .harness_input = fb_lang_harness_input,
};
