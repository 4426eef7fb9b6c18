/* What the main generated for a C call (lang/c_dispatch.c) sees of the runtime object (c_runtime.c). Its text
 * follows the user's code in the program; embedded by embed.S. */
#include <limits.h>
#include <stddef.h>
typedef struct json_t json_t;
typedef struct fnbox__buf { char *p; size_t n, cap; int stream; } fnbox__buf;
json_t *fnbox__read_args(size_t nmin, size_t nmax, const char *fname);
json_t *fnbox__arg(json_t *args, size_t i);
void fnbox__free_args(void);
long long fnbox__get_i64(json_t *j, int bits, const char *param, const char *type);
unsigned long long fnbox__get_u64(json_t *j, int bits, const char *param, const char *type);
double fnbox__get_f(json_t *j, const char *param, const char *type);
int fnbox__get_bool(json_t *j, const char *param, const char *type);
char fnbox__get_char(json_t *j, const char *param, const char *type);
char *fnbox__get_str(json_t *j, const char *param, const char *type);
void fnbox__adds(fnbox__buf *b, const char *s);
void fnbox__put_i64(fnbox__buf *b, long long v);
void fnbox__put_u64(fnbox__buf *b, unsigned long long v);
void fnbox__put_bool(fnbox__buf *b, int v);
void fnbox__put_char(fnbox__buf *b, char c);
void fnbox__put_f(fnbox__buf *b, double v, int is_float);
void fnbox__put_str(fnbox__buf *b, const char *s);
void fnbox__finish_ok(fnbox__buf *value);
