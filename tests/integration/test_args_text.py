"""Arguments that stay the request's text (request/args_text.c) and results spliced without a second parse
(core/result.c): the fast path must change nothing a function sees or a caller gets. Every argument here is
over 256 bytes (the size from which fnbox keeps an argument as text), written in the request with unusual
spacing and escapes; each must reach the function as the same value it would have had decoded, in every
interpreted language; what the fast path must refuse (duplicate keys, bad UTF-8, lone surrogates, depth)
is refused as before; and a hostile function's bytes on the result channel never reach the answer
unchecked."""
import json

import pytest

from fnboxlib import call, describe, ok, req

ECHO = {
    "python": "def f(x):\n    return x\n",
    "javascript": "function f(x) {\n  return x;\n}\n",
    "ruby": "def f(x)\n  x\nend\n",
    "php": "function f($x) {\n  return $x;\n}\n",
}
PAD = "x" * 400
# escapes (\u00e9, an escaped surrogate pair, \/), a big integer, a real, key order, spacing and newlines
TRICKY = ('{ "k" :\n [ 1 ,\t-0.5 , 1e5 , "\\u00e9\\ud83d\\ude00\\/\\n" , 123456789012345678901234567890 ,'
          ' {"z":1 , "a" : 2, "m": {"q": [true, false, null]}} ] , "pad" : "' + PAD + '" }')


def raw_request(lang, code, args_text, kwargs_text=None, fn="f"):
    parts = [f'"language": {json.dumps(lang)}', f'"code": {json.dumps(code)}', f'"functionName": "{fn}"',
             f'"args" : {args_text}']
    if kwargs_text is not None:
        parts.append(f'"kwargs":{kwargs_text}')
    return "{" + ", ".join(parts) + "}"


@pytest.mark.parametrize("lang", ["python", "javascript", "ruby", "php"])
def test_tricky_argument_reaches_the_function_as_its_value(lang):
    res = call(raw_request(lang, ECHO[lang], "[ " + TRICKY + " ]"))
    got = ok(res)
    want = json.loads(TRICKY)
    if lang == "php":  # README: PHP ints beyond 64 bits arrive as strings (JSON_BIGINT_AS_STRING)
        want["k"][4] = str(want["k"][4])
    assert got == want, describe(res.result)
    assert list(got["k"][5]) == ["z", "a", "m"], got["k"][5]  # key order kept
    assert "123456789012345678901234567890" in res.raw  # every digit, not a double


@pytest.mark.parametrize("lang", ["python", "ruby", "php"])
def test_large_keyword_argument_moves_through_normalization(lang):
    """Keywords naming parameters are placed by normalization (Ruby and PHP positions, Python binds them);
    a JSON null hole takes the keyword's value: the referenced text moves with it."""
    code = {
        "python": "def f(a, b=None, *, c):\n    return [a, b, c]\n",
        "ruby": "def f(a, b = nil, c:)\n  [a, b, c]\nend\n",
        "php": "function f($a, $b = null, $c = null) {\n  return [$a, $b, $c];\n}\n",
    }[lang]
    big = '{"p": "' + PAD + '", "u": "\\u2603"}'
    res = call(raw_request(lang, code, f"[null, {big}]", kwargs_text=f'{{"a": {big}, "c": [{big}]}}'))
    value = json.loads(big)
    assert ok(res) == [value, value, [value]], describe(res.result)


def test_javascript_keywords_merge_into_a_large_object_argument():
    """JavaScript merges keywords into an object argument: that needs the value, which is then decoded."""
    code = "function f(x, opts) {\n  return [x.p.length, opts];\n}\n"
    big = '{"p": "' + PAD + '"}'
    res = call(raw_request("javascript", code, f"[{big}]", kwargs_text='{"opts": {"k": 1}}'))
    assert ok(res) == [len(PAD), {"k": 1}], describe(res.result)


def test_javascript_big_integer_in_a_large_argument_is_a_bigint():
    code = "function f(x) {\n  return [typeof x.n, x.n + 1n, x.pad.length];\n}\n"
    res = call(raw_request("javascript", code, '[{"n": 12345678901234567890123, "pad": "' + PAD + '"}]'))
    assert ok(res) == ["bigint", 12345678901234567890124, len(PAD)], describe(res.result)


@pytest.mark.parametrize("label,arg", [
    ("duplicate key", '{"a": 1, "pad": "' + PAD + '", "a": 2}'),
    ("duplicate key spelled with an escape", '{"a": 1, "pad": "' + PAD + '", "\\u0061": 2}'),
    ("lone high surrogate", '["' + PAD + '\\ud800"]'),
    ("lone low surrogate", '["' + PAD + '\\udc00x"]'),
    ("control character", '["' + PAD + '\x01"]'),
    ("trailing comma", '[1, "' + PAD + '",]'),
    ("leading zero", '[01, "' + PAD + '"]'),
])
def test_malformed_large_argument_is_refused(label, arg):
    res = call(raw_request("python", ECHO["python"], f"[{arg}]"))
    assert res.code == 2, f"{label}: {describe(res.result)}"
    assert res.result["error"]["type"] == "InvalidRequest", describe(res.result)
    assert "malformed JSON" in res.result["error"]["message"], describe(res.result)


def test_invalid_utf8_in_a_large_argument_is_refused():
    text = raw_request("python", ECHO["python"], '["' + PAD + '"]').encode()
    text = text.replace(PAD.encode(), PAD[:200].encode() + b"\xc3\x28" + PAD[202:].encode())
    res = call(text)
    assert res.code == 2 and "malformed JSON" in res.result["error"]["message"], describe(res.result)


def test_nesting_beyond_the_limit_is_refused():
    deep = "[" * 2100 + '"' + PAD + '"' + "]" * 2100
    res = call(raw_request("python", ECHO["python"], f"[{deep}]"))
    assert res.code == 2 and "depth" in res.result["error"]["message"], describe(res.result)


def hostile(payload):
    """A Python function that writes its own bytes to the result channel (fd 3) and exits at once."""
    return ("import os\n"
            "def f():\n"
            f"    os.write(3, b'{{\"ok\":true}}\\n' + {payload!r})\n"
            "    os._exit(0)\n")


@pytest.mark.parametrize("label,payload", [
    ("invalid UTF-8", b'["\xff\xfe"]'),
    ("NUL after a number (jansson skips it)", b"[1\x00]"),
    ("cut short", b'[1, 2, {"a": '),
    ("two values", b"[1] [2]"),
    ("lone surrogate escape", b'"\\ud800"'),
    ("overlong UTF-8", b'"\xc0\xaf"'),
])
def test_hostile_result_bytes_are_refused(label, payload):
    res = call(req("python", hostile(payload), "f"))
    result = res.result
    assert result["status"] == "error", f"{label}: {describe(result)}"
    assert result["error"]["type"] == "SerializationError", describe(result)
    assert "not valid JSON" in result["error"]["message"], describe(result)
    assert "result" not in result or result["result"] is None


def test_hostile_result_valid_text_is_spliced_verbatim():
    """Valid JSON the function writes itself is the answer's result, byte for byte (big numbers included;
    a real beyond a double's range, 1e400, is refused, as jansson's check always did)."""
    text = b'{"b":[1e300,-0,123456789012345678901234567890],"s":"\\u00e9\\/"}'
    res = call(req("python", hostile(text), "f"))
    assert res.result["status"] == "success", describe(res.result)
    assert text.decode() in res.raw


def test_large_structured_result_with_escapes_round_trips():
    code = ("def f(n):\n"
            "    return [{'i': i, 's': '\\u00e9\\u2603\\U0001F600\"\\\\/' * 3, 'big': 2 ** 80 + i} for i in range(n)]\n")
    res = call(req("python", code, "f", [20000], limits={"resultBytes": 64 << 20}))
    got = ok(res)
    assert len(got) == 20000 and got[-1] == {"i": 19999, "s": "\u00e9\u2603\U0001F600\"\\/" * 3, "big": 2 ** 80 + 19999}
