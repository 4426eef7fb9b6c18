/* C and C++ dispatch (c_dispatch.h): the program fnbox compiles = the user's code + a fixed prelude of JSON
 * converters + a main generated from the function's declaration. The prelude is plain C (also valid C++);
 * C++ adds template converters for std::string, std::vector and std::map, and maps a thrown std::exception
 * to an error with its demangled type name and what(). */
#include "lang/c_dispatch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/json.h"

static bool fb_c_type_supported_n(const char *s, size_t n, bool cpp, bool is_return);

/* The C runtime: converters and the result writer. Compiled once per compiler into an object that every C
 * program links (core/compile.c caches it); textually included, with its functions static, in C++ programs. */
static const char k_prelude_c[] =
    "#include <errno.h>\n"
    "#include <jansson.h>\n"
    "#include <limits.h>\n"
    "#include <math.h>\n"
    "#include <stdio.h>\n"
    "#include <stdlib.h>\n"
    "#include <string.h>\n"
    "#include <unistd.h>\n"
    "\n"
    "/* stream: the result value, sent to fd 3 in 1 MiB pieces instead of held whole (a 64 MB result would\n"
    " * otherwise need a second 64 MB) */\n"
    "typedef struct fnbox__buf { char *p; size_t n, cap; int stream; } fnbox__buf;\n"
    "\n"
    "FNBOX__FN void fnbox__write_all(int fd, const char *p, size_t n)\n"
    "{\n"
    "    while (n > 0) {\n"
    "        ssize_t w = write(fd, p, n);\n"
    "        if (w < 0 && errno == EINTR)\n"
    "            continue;\n"
    "        if (w <= 0)\n"
    "            _exit(70);\n"
    "        p += w;\n"
    "        n -= (size_t)w;\n"
    "    }\n"
    "}\n"
    "\n"
    "static int fnbox__ok_sent;\n"
    "\n"
    "/* The result so far to fd 3, after the {\"ok\":true} line. */\n"
    "FNBOX__FN void fnbox__flush(fnbox__buf *b)\n"
    "{\n"
    "    if (!fnbox__ok_sent) {\n"
    "        fflush(NULL);\n"
    "        fnbox__write_all(3, \"{\\\"ok\\\":true}\\n\", 12);\n"
    "        fnbox__ok_sent = 1;\n"
    "    }\n"
    "    fnbox__write_all(3, b->p, b->n);\n"
    "    b->n = 0;\n"
    "}\n"
    "\n"
    "FNBOX__FN void fnbox__add(fnbox__buf *b, const char *s, size_t n)\n"
    "{\n"
    "    if (b->stream && b->n + n > ((size_t)1 << 20)) {\n"
    "        fnbox__flush(b);\n"
    "        if (n > ((size_t)1 << 20)) {\n"
    "            fnbox__write_all(3, s, n);\n"
    "            return;\n"
    "        }\n"
    "    }\n"
    "    if (b->n + n + 1 > b->cap) {\n"
    "        size_t cap = b->cap ? b->cap * 2 : 256;\n"
    "        while (cap < b->n + n + 1)\n"
    "            cap *= 2;\n"
    "        char *p = (char *)realloc(b->p, cap);\n"
    "        if (!p)\n"
    "            abort();\n"
    "        b->p = p;\n"
    "        b->cap = cap;\n"
    "    }\n"
    "    memcpy(b->p + b->n, s, n);\n"
    "    b->n += n;\n"
    "    b->p[b->n] = '\\0';\n"
    "}\n"
    "\n"
    "FNBOX__FN void fnbox__adds(fnbox__buf *b, const char *s) { fnbox__add(b, s, strlen(s)); }\n"
    "\n"
    "/* JSON string; invalid UTF-8 becomes U+FFFD */\n"
    "FNBOX__FN void fnbox__put_strn(fnbox__buf *b, const char *s, size_t n)\n"
    "{\n"
    "    fnbox__add(b, \"\\\"\", 1);\n"
    "    for (size_t i = 0; i < n;) {\n"
    "        unsigned char c = (unsigned char)s[i];\n"
    "        if (c == '\"' || c == '\\\\') {\n"
    "            char e[2] = {'\\\\', (char)c};\n"
    "            fnbox__add(b, e, 2);\n"
    "            i++;\n"
    "        } else if (c < 0x20 || c == 0x7f) {\n"
    "            char e[8];\n"
    "            snprintf(e, sizeof e, \"\\\\u%04x\", c);\n"
    "            fnbox__adds(b, e);\n"
    "            i++;\n"
    "        } else if (c < 0x80) { /* a run of plain bytes at once */\n"
    "            size_t j = i + 1;\n"
    "            while (j < n && (unsigned char)s[j] >= 0x20 && (unsigned char)s[j] < 0x7f && s[j] != '\"' &&\n"
    "                   s[j] != '\\\\')\n"
    "                j++;\n"
    "            fnbox__add(b, s + i, j - i);\n"
    "            i = j;\n"
    "        } else {\n"
    "            size_t len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;\n"
    "            int ok = len > 0 && i + len <= n;\n"
    "            for (size_t k = 1; ok && k < len; k++)\n"
    "                ok = ((unsigned char)s[i + k] & 0xc0) == 0x80;\n"
    "            if (ok && len >= 3) {\n"
    "                unsigned char d = (unsigned char)s[i + 1];\n"
    "                ok = !(c == 0xe0 && d < 0xa0) && !(c == 0xed && d > 0x9f) && !(c == 0xf0 && d < 0x90) &&\n"
    "                     !(c == 0xf4 && d > 0x8f);\n"
    "            }\n"
    "            if (ok) {\n"
    "                fnbox__add(b, s + i, len);\n"
    "                i += len;\n"
    "            } else {\n"
    "                fnbox__adds(b, \"\\\\ufffd\");\n"
    "                i++;\n"
    "            }\n"
    "        }\n"
    "    }\n"
    "    fnbox__add(b, \"\\\"\", 1);\n"
    "}\n"
    "\n"
    "FNBOX__FN void fnbox__put_str(fnbox__buf *b, const char *s)\n"
    "{\n"
    "    if (!s)\n"
    "        fnbox__adds(b, \"null\");\n"
    "    else\n"
    "        fnbox__put_strn(b, s, strlen(s));\n"
    "}\n"
    "\n"
    "FNBOX__FN void fnbox__put_i64(fnbox__buf *b, long long v)\n"
    "{\n"
    "    char t[32];\n"
    "    snprintf(t, sizeof t, \"%lld\", v);\n"
    "    fnbox__adds(b, t);\n"
    "}\n"
    "\n"
    "FNBOX__FN void fnbox__put_u64(fnbox__buf *b, unsigned long long v)\n"
    "{\n"
    "    char t[32];\n"
    "    snprintf(t, sizeof t, \"%llu\", v);\n"
    "    fnbox__adds(b, t);\n"
    "}\n"
    "\n"
    "FNBOX__FN void fnbox__put_bool(fnbox__buf *b, int v) { fnbox__adds(b, v ? \"true\" : \"false\"); }\n"
    "\n"
    "FNBOX__FN void fnbox__put_char(fnbox__buf *b, char c) { fnbox__put_strn(b, &c, 1); }\n"
    "\n"
    "/* the shortest text that reads back as the same value; NaN and infinities are null */\n"
    "FNBOX__FN void fnbox__put_f(fnbox__buf *b, double v, int is_float)\n"
    "{\n"
    "    if (isnan(v) || isinf(v)) {\n"
    "        fnbox__adds(b, \"null\");\n"
    "        return;\n"
    "    }\n"
    "    char t[64];\n"
    "    for (int prec = is_float ? 6 : 15; prec <= 17; prec++) {\n"
    "        snprintf(t, sizeof t, \"%.*g\", prec, v);\n"
    "        if (is_float ? (float)strtod(t, NULL) == (float)v : strtod(t, NULL) == v)\n"
    "            break;\n"
    "    }\n"
    "    fnbox__adds(b, t);\n"
    "    if (!strpbrk(t, \".eE\"))\n"
    "        fnbox__adds(b, \".0\");\n"
    "}\n"
    "\n"
    "FNBOX__FN void fnbox__finish_ok(fnbox__buf *value)\n"
    "{\n"
    "    fnbox__flush(value);\n"
    "}\n"
    "\n"
    "FNBOX__FN void fnbox__fail(const char *type, const char *msg)\n"
    "{\n"
    "    fnbox__buf b = {0, 0, 0, 0};\n"
    "    fnbox__adds(&b, \"{\\\"ok\\\":false,\\\"error\\\":{\\\"type\\\":\");\n"
    "    fnbox__put_str(&b, type);\n"
    "    fnbox__adds(&b, \",\\\"message\\\":\");\n"
    "    fnbox__put_str(&b, msg);\n"
    "    fnbox__adds(&b, \"},\\\"exitCode\\\":1}\\n\");\n"
    "    fflush(NULL);\n"
    "    fnbox__write_all(3, b.p, b.n);\n"
    "    exit(1);\n"
    "}\n"
    "\n"
    "FNBOX__FN void fnbox__bad_arg(const char *param, const char *type, const char *want, json_t *got)\n"
    "{\n"
    "    static const char *const names[] = {\"object\", \"array\", \"string\", \"integer\", \"real\", \"true\", \"false\", \"null\"};\n"
    "    char msg[512];\n"
    "    snprintf(msg, sizeof msg, \"parameter '%s' (%s): expected %s, got %s\", param, type, want,\n"
    "             got ? names[json_typeof(got)] : \"nothing\");\n"
    "    fnbox__fail(\"ArgumentError\", msg);\n"
    "}\n"
    "\n"
    "/* A digit string: fnbox sends integers beyond 64 bits as strings (they still may fit an unsigned type). */\n"
    "FNBOX__FN int fnbox__digits(const char *s)\n"
    "{\n"
    "    if (*s == '-')\n"
    "        s++;\n"
    "    if (!*s)\n"
    "        return 0;\n"
    "    for (; *s; s++)\n"
    "        if (*s < '0' || *s > '9')\n"
    "            return 0;\n"
    "    return 1;\n"
    "}\n"
    "\n"
    "FNBOX__FN long long fnbox__get_i64(json_t *j, int bits, const char *param, const char *type)\n"
    "{\n"
    "    long long v;\n"
    "    if (json_is_integer(j)) {\n"
    "        v = json_integer_value(j);\n"
    "    } else if (json_is_string(j) && fnbox__digits(json_string_value(j))) {\n"
    "        fnbox__bad_arg(param, type, \"an integer that fits the type\", j);\n"
    "        return 0;\n"
    "    } else {\n"
    "        fnbox__bad_arg(param, type, \"an integer\", j);\n"
    "        return 0;\n"
    "    }\n"
    "    long long max = bits >= 64 ? LLONG_MAX : (1LL << (bits - 1)) - 1, min = -max - 1;\n"
    "    if (v < min || v > max) {\n"
    "        char want[128];\n"
    "        snprintf(want, sizeof want, \"an integer in [%lld, %lld] (got %lld)\", min, max, v);\n"
    "        fnbox__fail(\"ArgumentError\", want);\n"
    "    }\n"
    "    return v;\n"
    "}\n"
    "\n"
    "FNBOX__FN unsigned long long fnbox__get_u64(json_t *j, int bits, const char *param, const char *type)\n"
    "{\n"
    "    unsigned long long v;\n"
    "    unsigned long long max = bits >= 64 ? ULLONG_MAX : (1ULL << bits) - 1;\n"
    "    if (json_is_integer(j) && json_integer_value(j) >= 0) {\n"
    "        v = (unsigned long long)json_integer_value(j);\n"
    "    } else if (json_is_string(j) && fnbox__digits(json_string_value(j)) && json_string_value(j)[0] != '-') {\n"
    "        errno = 0;\n"
    "        v = strtoull(json_string_value(j), NULL, 10);\n"
    "        if (errno == ERANGE)\n"
    "            v = 0, max = 0, j = NULL;\n"
    "    } else {\n"
    "        v = 0, max = 0, j = NULL;\n"
    "    }\n"
    "    if (!j || v > max) {\n"
    "        char want[128];\n"
    "        snprintf(want, sizeof want, \"parameter '%s' (%s): expected an integer in [0, %llu]\", param, type,\n"
    "                 bits >= 64 ? ULLONG_MAX : (1ULL << bits) - 1);\n"
    "        fnbox__fail(\"ArgumentError\", want);\n"
    "    }\n"
    "    return v;\n"
    "}\n"
    "\n"
    "FNBOX__FN double fnbox__get_f(json_t *j, const char *param, const char *type)\n"
    "{\n"
    "    if (json_is_number(j))\n"
    "        return json_number_value(j);\n"
    "    if (json_is_string(j)) { /* a number beyond double range, sent as text */\n"
    "        const char *s = json_string_value(j);\n"
    "        char *end;\n"
    "        double v = strtod(s, &end);\n"
    "        if (*s && (*s == '-' || (*s >= '0' && *s <= '9')) && *end == '\\0')\n"
    "            return v;\n"
    "    }\n"
    "    fnbox__bad_arg(param, type, \"a number\", j);\n"
    "    return 0;\n"
    "}\n"
    "\n"
    "FNBOX__FN int fnbox__get_bool(json_t *j, const char *param, const char *type)\n"
    "{\n"
    "    if (!json_is_boolean(j))\n"
    "        fnbox__bad_arg(param, type, \"true or false\", j);\n"
    "    return json_is_true(j);\n"
    "}\n"
    "\n"
    "FNBOX__FN char fnbox__get_char(json_t *j, const char *param, const char *type)\n"
    "{\n"
    "    if (json_is_string(j) && json_string_length(j) == 1)\n"
    "        return json_string_value(j)[0];\n"
    "    if (json_is_integer(j) && json_integer_value(j) >= CHAR_MIN && json_integer_value(j) <= UCHAR_MAX)\n"
    "        return (char)json_integer_value(j);\n"
    "    fnbox__bad_arg(param, type, \"a one-byte string or a character code\", j);\n"
    "    return 0;\n"
    "}\n"
    "\n"
    "/* NULL for JSON null; a private copy (the function may write to a char*) */\n"
    "FNBOX__FN char *fnbox__get_str(json_t *j, const char *param, const char *type)\n"
    "{\n"
    "    if (json_is_null(j))\n"
    "        return NULL;\n"
    "    if (!json_is_string(j))\n"
    "        fnbox__bad_arg(param, type, \"a string or null\", j);\n"
    "    if (strlen(json_string_value(j)) != json_string_length(j)) /* it would end at the NUL, silently */\n"
    "        fnbox__bad_arg(param, type, \"a string without NUL characters (a C string ends at the first)\", j);\n"
    "    char *s = (char *)malloc(json_string_length(j) + 1);\n"
    "    if (!s)\n"
    "        abort();\n"
    "    memcpy(s, json_string_value(j), json_string_length(j) + 1);\n"
    "    return s;\n"
    "}\n"
    "\n"
    "static json_t *fnbox__root;\n"
    "\n"
    "static size_t fnbox__read4(void *buf, size_t len, void *data)\n"
    "{\n"
    "    (void)data;\n"
    "    for (;;) {\n"
    "        ssize_t r = read(4, buf, len);\n"
    "        if (r >= 0)\n"
    "            return (size_t)r;\n"
    "        if (errno != EINTR)\n"
    "            return (size_t)-1;\n"
    "    }\n"
    "}\n"
    "\n"
    "/* jansson parses straight from fd 4 (json_loadfd would read it a byte per syscall): no whole copy of a\n"
    " * large input is held besides the parsed values */\n"
    "FNBOX__FN json_t *fnbox__read_args(size_t nmin, size_t nmax, const char *fname)\n"
    "{\n"
    "    json_error_t e;\n"
    "    json_t *root = fnbox__root = json_load_callback(fnbox__read4, NULL, JSON_ALLOW_NUL, &e);\n"
    "    close(4);\n"
    "    json_t *args = root ? json_object_get(root, \"args\") : NULL;\n"
    "    if (!json_is_array(args))\n"
    "        fnbox__fail(\"HarnessError\", \"the call input has no args array\");\n"
    "    size_t n = json_array_size(args);\n"
    "    if (n < nmin || n > nmax) {\n"
    "        char msg[256];\n"
    "        snprintf(msg, sizeof msg, \"%s() takes %s%zu argument%s but %zu were given\", fname,\n"
    "                 nmin == nmax ? \"\" : n < nmin ? \"at least \" : \"at most \", n < nmin ? nmin : nmax,\n"
    "                 (n < nmin ? nmin : nmax) == 1 ? \"\" : \"s\", n);\n"
    "        fnbox__fail(\"ArgumentError\", msg);\n"
    "    }\n"
    "    return args;\n"
    "}\n"
    "\n"
    "FNBOX__FN json_t *fnbox__arg(json_t *args, size_t i) { return json_array_get(args, i); }\n"
    "\n"
    "/* Once every argument is converted: the parsed input is not kept during the call. */\n"
    "FNBOX__FN void fnbox__free_args(void)\n"
    "{\n"
    "    json_decref(fnbox__root);\n"
    "    fnbox__root = NULL;\n"
    "}\n";

/* What a C program's generated main sees of the runtime object. */
static const char k_decls_c[] =
    "#include <limits.h>\n"
    "#include <stddef.h>\n"
    "typedef struct json_t json_t;\n"
    "typedef struct fnbox__buf { char *p; size_t n, cap; int stream; } fnbox__buf;\n"
    "json_t *fnbox__read_args(size_t nmin, size_t nmax, const char *fname);\n"
    "json_t *fnbox__arg(json_t *args, size_t i);\n"
    "void fnbox__free_args(void);\n"
    "long long fnbox__get_i64(json_t *j, int bits, const char *param, const char *type);\n"
    "unsigned long long fnbox__get_u64(json_t *j, int bits, const char *param, const char *type);\n"
    "double fnbox__get_f(json_t *j, const char *param, const char *type);\n"
    "int fnbox__get_bool(json_t *j, const char *param, const char *type);\n"
    "char fnbox__get_char(json_t *j, const char *param, const char *type);\n"
    "char *fnbox__get_str(json_t *j, const char *param, const char *type);\n"
    "void fnbox__adds(fnbox__buf *b, const char *s);\n"
    "void fnbox__put_i64(fnbox__buf *b, long long v);\n"
    "void fnbox__put_u64(fnbox__buf *b, unsigned long long v);\n"
    "void fnbox__put_bool(fnbox__buf *b, int v);\n"
    "void fnbox__put_char(fnbox__buf *b, char c);\n"
    "void fnbox__put_f(fnbox__buf *b, double v, int is_float);\n"
    "void fnbox__put_str(fnbox__buf *b, const char *s);\n"
    "void fnbox__finish_ok(fnbox__buf *value);\n";

static const char k_prelude_cpp[] =
    "#include <cxxabi.h>\n"
    "#include <exception>\n"
    "#include <map>\n"
    "#include <string>\n"
    "#include <type_traits>\n"
    "#include <typeinfo>\n"
    "#include <vector>\n"
    "\n"
    "template <class T> struct fnbox__is_vec : std::false_type {};\n"
    "template <class T, class A> struct fnbox__is_vec<std::vector<T, A>> : std::true_type {};\n"
    "template <class T> struct fnbox__is_map : std::false_type {};\n"
    "template <class V, class C, class A> struct fnbox__is_map<std::map<std::string, V, C, A>> : std::true_type {};\n"
    "\n"
    "template <class T> static void fnbox__get(json_t *j, T &out, const char *param, const char *type)\n"
    "{\n"
    "    if constexpr (std::is_same_v<T, bool>) {\n"
    "        out = fnbox__get_bool(j, param, type);\n"
    "    } else if constexpr (std::is_same_v<T, char>) {\n"
    "        out = fnbox__get_char(j, param, type);\n"
    "    } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {\n"
    "        out = (T)fnbox__get_i64(j, (int)(sizeof(T) * CHAR_BIT), param, type);\n"
    "    } else if constexpr (std::is_integral_v<T>) {\n"
    "        out = (T)fnbox__get_u64(j, (int)(sizeof(T) * CHAR_BIT), param, type);\n"
    "    } else if constexpr (std::is_floating_point_v<T>) {\n"
    "        out = (T)fnbox__get_f(j, param, type);\n"
    "    } else if constexpr (std::is_same_v<T, const char *> || std::is_same_v<T, char *>) {\n"
    "        out = fnbox__get_str(j, param, type);\n"
    "    } else if constexpr (std::is_same_v<T, std::string>) {\n"
    "        if (!json_is_string(j))\n"
    "            fnbox__bad_arg(param, type, \"a string\", j);\n"
    "        out.assign(json_string_value(j), json_string_length(j));\n"
    "    } else if constexpr (fnbox__is_vec<T>::value) {\n"
    "        if (!json_is_array(j))\n"
    "            fnbox__bad_arg(param, type, \"an array\", j);\n"
    "        out.clear();\n"
    "        out.reserve(json_array_size(j));\n"
    "        for (size_t i = 0; i < json_array_size(j); i++) {\n"
    "            typename T::value_type v{};\n"
    "            fnbox__get(json_array_get(j, i), v, param, type);\n"
    "            out.push_back(std::move(v));\n"
    "        }\n"
    "    } else if constexpr (fnbox__is_map<T>::value) {\n"
    "        if (!json_is_object(j))\n"
    "            fnbox__bad_arg(param, type, \"an object\", j);\n"
    "        out.clear();\n"
    "        const char *key;\n"
    "        json_t *child;\n"
    "        json_object_foreach(j, key, child) {\n"
    "            typename T::mapped_type v{};\n"
    "            fnbox__get(child, v, param, type);\n"
    "            out.emplace(std::string(key), std::move(v));\n"
    "        }\n"
    "    } else {\n"
    "        static_assert(sizeof(T) == 0, \"fnbox: unsupported parameter type\");\n"
    "    }\n"
    "}\n"
    "\n"
    "template <class T> static void fnbox__put(fnbox__buf *b, const T &v)\n"
    "{\n"
    "    if constexpr (std::is_same_v<T, bool>) {\n"
    "        fnbox__put_bool(b, v);\n"
    "    } else if constexpr (std::is_same_v<T, char>) {\n"
    "        fnbox__put_char(b, v);\n"
    "    } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {\n"
    "        fnbox__put_i64(b, (long long)v);\n"
    "    } else if constexpr (std::is_integral_v<T>) {\n"
    "        fnbox__put_u64(b, (unsigned long long)v);\n"
    "    } else if constexpr (std::is_floating_point_v<T>) {\n"
    "        fnbox__put_f(b, (double)v, std::is_same_v<T, float>);\n"
    "    } else if constexpr (std::is_same_v<T, const char *> || std::is_same_v<T, char *>) {\n"
    "        fnbox__put_str(b, v);\n"
    "    } else if constexpr (std::is_same_v<T, std::string>) {\n"
    "        fnbox__put_strn(b, v.data(), v.size());\n"
    "    } else if constexpr (fnbox__is_vec<T>::value) {\n"
    "        fnbox__add(b, \"[\", 1);\n"
    "        bool first = true;\n"
    "        for (const auto &e : v) {\n"
    "            if (!first)\n"
    "                fnbox__add(b, \",\", 1);\n"
    "            first = false;\n"
    "            fnbox__put(b, e);\n"
    "        }\n"
    "        fnbox__add(b, \"]\", 1);\n"
    "    } else if constexpr (fnbox__is_map<T>::value) {\n"
    "        fnbox__add(b, \"{\", 1);\n"
    "        bool first = true;\n"
    "        for (const auto &e : v) {\n"
    "            if (!first)\n"
    "                fnbox__add(b, \",\", 1);\n"
    "            first = false;\n"
    "            fnbox__put_strn(b, e.first.data(), e.first.size());\n"
    "            fnbox__add(b, \":\", 1);\n"
    "            fnbox__put(b, e.second);\n"
    "        }\n"
    "        fnbox__add(b, \"}\", 1);\n"
    "    } else {\n"
    "        static_assert(sizeof(T) == 0, \"fnbox: unsupported return type\");\n"
    "    }\n"
    "}\n"
    "\n"
    "static void fnbox__exception(const std::exception &e)\n"
    "{\n"
    "    int st = 0;\n"
    "    char *name = abi::__cxa_demangle(typeid(e).name(), nullptr, nullptr, &st);\n"
    "    fnbox__fail(name && st == 0 ? name : typeid(e).name(), e.what());\n"
    "}\n"
    "\n"
    "/* `throw 42`, `throw \"text\"`: no what(), but the thrown type is known */\n"
    "static void fnbox__unknown_exception()\n"
    "{\n"
    "    std::type_info *t = abi::__cxa_current_exception_type();\n"
    "    int st = 0;\n"
    "    char *name = t ? abi::__cxa_demangle(t->name(), nullptr, nullptr, &st) : nullptr;\n"
    "    std::string msg = std::string(\"a value of type '\") + (name && st == 0 ? name : t ? t->name() : \"?\") +\n"
    "                      \"' was thrown (not a std::exception)\";\n"
    "    fnbox__fail(\"UnknownException\", msg.c_str());\n"
    "}\n";

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
        fputs(k_prelude_c, f);
        fputs(k_prelude_cpp, f);
        gen_cpp_main(f, sig);
    } else {
        fputs(k_decls_c, f);
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
    *len = sizeof k_prelude_c - 1;
    return k_prelude_c;
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

char *fb_c_call_input(json_t *args, size_t *len)
{
    json_t *in = json_object();
    json_t *a = plain(args ? args : json_array());
    char *text = NULL;
    if (in && a && json_object_set_new(in, "args", a) == 0) {
        a = NULL;
        text = json_dumps(in, JSON_COMPACT);
    }
    json_decref(a);
    json_decref(in);
    if (text)
        *len = strlen(text);
    return text;
}
