"""A 10 MB argument reaches the function whole and comes back whole (no stdin/argv size wall)."""
from fnboxlib import call, describe, req

ECHO_LEN = {
    "python": "def f(s):\n    return [len(s), s]\n",
    "javascript": "function f(s) {\n  return [s.length, s];\n}\n",
}


def test_ten_megabyte_argument(lang):
    body = "0123456789abcdef" * (10 * 1024 * 1024 // 16)
    s = "é" + body + "😀"
    res = call(req(lang, ECHO_LEN[lang], "f", [s]), timeout=120)
    result = res.result
    assert result["status"] == "success", describe(result)
    n, back = result["result"]
    # Python counts code points; JS counts UTF-16 units (the emoji is a surrogate pair)
    expected = len(s) if lang == "python" else len(s.encode("utf-16-le")) // 2
    assert n == expected, f"function saw {n} characters, expected {expected}"
    assert len(back) == len(s) and back == s, "the echoed string differs"


def test_large_structured_argument():
    """~200k small items: the argument is parsed as a structure, not just a long string."""
    items = [{"i": i, "s": str(i)} for i in range(200_000)]
    code = "def f(items):\n    return [len(items), sum(x['i'] for x in items), items[-1]]\n"
    got = call(req("python", code, "f", [items]), timeout=120).result
    assert got["status"] == "success", describe(got)
    assert got["result"] == [200_000, sum(range(200_000)), {"i": 199_999, "s": "199999"}]
