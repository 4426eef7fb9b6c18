/* The C++ part of the dispatcher (lang/c_dispatch.c): template converters for std::string, std::vector and
 * std::map, and a thrown exception reported with its demangled type. In a C++ program its text follows
 * c_runtime.c's (with FNBOX__FN static); embedded by embed.S. */
#include <cxxabi.h>
#include <exception>
#include <map>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <vector>

template <class T> struct fnbox__is_vec : std::false_type {};
template <class T, class A> struct fnbox__is_vec<std::vector<T, A>> : std::true_type {};
template <class T> struct fnbox__is_map : std::false_type {};
template <class V, class C, class A> struct fnbox__is_map<std::map<std::string, V, C, A>> : std::true_type {};

template <class T> static void fnbox__get(json_t *j, T &out, const char *param, const char *type)
{
    if constexpr (std::is_same_v<T, bool>) {
        out = fnbox__get_bool(j, param, type);
    } else if constexpr (std::is_same_v<T, char>) {
        out = fnbox__get_char(j, param, type);
    } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
        out = (T)fnbox__get_i64(j, (int)(sizeof(T) * CHAR_BIT), param, type);
    } else if constexpr (std::is_integral_v<T>) {
        out = (T)fnbox__get_u64(j, (int)(sizeof(T) * CHAR_BIT), param, type);
    } else if constexpr (std::is_floating_point_v<T>) {
        out = (T)fnbox__get_f(j, param, type);
    } else if constexpr (std::is_same_v<T, const char *> || std::is_same_v<T, char *>) {
        out = fnbox__get_str(j, param, type);
    } else if constexpr (std::is_same_v<T, std::string>) {
        if (!json_is_string(j))
            fnbox__bad_arg(param, type, "a string", j);
        out.assign(json_string_value(j), json_string_length(j));
    } else if constexpr (fnbox__is_vec<T>::value) {
        if (!json_is_array(j))
            fnbox__bad_arg(param, type, "an array", j);
        out.clear();
        out.reserve(json_array_size(j));
        for (size_t i = 0; i < json_array_size(j); i++) {
            typename T::value_type v{};
            fnbox__get(json_array_get(j, i), v, param, type);
            out.push_back(std::move(v));
        }
    } else if constexpr (fnbox__is_map<T>::value) {
        if (!json_is_object(j))
            fnbox__bad_arg(param, type, "an object", j);
        out.clear();
        const char *key;
        json_t *child;
        json_object_foreach(j, key, child) {
            typename T::mapped_type v{};
            fnbox__get(child, v, param, type);
            out.emplace(std::string(key), std::move(v));
        }
    } else {
        static_assert(sizeof(T) == 0, "fnbox: unsupported parameter type");
    }
}

template <class T> static void fnbox__put(fnbox__buf *b, const T &v)
{
    if constexpr (std::is_same_v<T, bool>) {
        fnbox__put_bool(b, v);
    } else if constexpr (std::is_same_v<T, char>) {
        fnbox__put_char(b, v);
    } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
        fnbox__put_i64(b, (long long)v);
    } else if constexpr (std::is_integral_v<T>) {
        fnbox__put_u64(b, (unsigned long long)v);
    } else if constexpr (std::is_floating_point_v<T>) {
        fnbox__put_f(b, (double)v, std::is_same_v<T, float>);
    } else if constexpr (std::is_same_v<T, const char *> || std::is_same_v<T, char *>) {
        fnbox__put_str(b, v);
    } else if constexpr (std::is_same_v<T, std::string>) {
        fnbox__put_strn(b, v.data(), v.size());
    } else if constexpr (fnbox__is_vec<T>::value) {
        fnbox__add(b, "[", 1);
        bool first = true;
        for (const auto &e : v) {
            if (!first)
                fnbox__add(b, ",", 1);
            first = false;
            fnbox__put(b, e);
        }
        fnbox__add(b, "]", 1);
    } else if constexpr (fnbox__is_map<T>::value) {
        fnbox__add(b, "{", 1);
        bool first = true;
        for (const auto &e : v) {
            if (!first)
                fnbox__add(b, ",", 1);
            first = false;
            fnbox__put_strn(b, e.first.data(), e.first.size());
            fnbox__add(b, ":", 1);
            fnbox__put(b, e.second);
        }
        fnbox__add(b, "}", 1);
    } else {
        static_assert(sizeof(T) == 0, "fnbox: unsupported return type");
    }
}

static void fnbox__exception(const std::exception &e)
{
    int st = 0;
    char *name = abi::__cxa_demangle(typeid(e).name(), nullptr, nullptr, &st);
    fnbox__fail(name && st == 0 ? name : typeid(e).name(), e.what());
}

/* `throw 42`, `throw "text"`: no what(), but the thrown type is known */
static void fnbox__unknown_exception()
{
    std::type_info *t = abi::__cxa_current_exception_type();
    int st = 0;
    char *name = t ? abi::__cxa_demangle(t->name(), nullptr, nullptr, &st) : nullptr;
    std::string msg = std::string("a value of type '") + (name && st == 0 ? name : t ? t->name() : "?") +
                      "' was thrown (not a std::exception)";
    fnbox__fail("UnknownException", msg.c_str());
}
