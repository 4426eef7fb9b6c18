"""Failures of the user's code: exceptions with their class names and stacks into user_code, exits,
signals, syntax errors, missing/ambiguous functions; and body mode."""
import pytest

from fnboxlib import call, describe, failed, ok, req


def err_of(lang, code, fn="f", args=None, **extra):
    return failed(call(req(lang, code, fn, args if args is not None else [], **extra)))


def test_zero_division_python():
    code = "def divide(a, b):\n    return a / b\n"
    res = call(req("python", code, "divide", [1, 0]))
    err = failed(res)
    assert err["type"] == "ZeroDivisionError"
    assert "division by zero" in err["message"]
    assert res.result["exitCode"] == 1


@pytest.mark.parametrize("lang_,code,etype", [
    ("python", "def f():\n    return 1 + 'a'\n", "TypeError"),
    ("python", "def f():\n    return {}['missing']\n", "KeyError"),
    ("javascript", "function f() {\n  return null.x;\n}\n", "TypeError"),
    ("javascript", "function f() {\n  return new Array(-1);\n}\n", "RangeError"),
    ("javascript", "function f() {\n  return undefinedVariable + 1;\n}\n", "ReferenceError"),
    ("ruby", "def f\n  1 + 'a'\nend\n", "TypeError"),
    ("ruby", "def f\n  nil.upcase\nend\n", "NoMethodError"),
    ("ruby", "def f\n  {}.fetch(:missing)\nend\n", "KeyError"),
    ("ruby", "def f\n  1 / 0\nend\n", "ZeroDivisionError"),
    ("ruby", "def f\n  raise NotImplementedError, 'later'\nend\n", "NotImplementedError"),   # not a StandardError
    ("php", "function f() {\n  return intdiv(1, 0);\n}\n", "DivisionByZeroError"),
    ("php", "function f() {\n  return strlen();\n}\n", "ArgumentCountError"),
    ("php", "function g(int $x) { return $x; }\nfunction f() {\n  return g('no');\n}\n", "TypeError"),
    ("php", "function f() {\n  return (new DateTime('not a date at all'));\n}\n", "Exception"),
    ("php", "function f() {\n  return [] > new ArrayObject() ? 1 : undefined_function_x();\n}\n", "Error"),
])
def test_builtin_exception_types(lang_, code, etype):
    err = err_of(lang_, code)
    assert err["type"] == etype, err
    assert err["message"], err


def test_custom_exception_class(lang):
    code = {
        "python": ("class ValidationError(ValueError):\n    pass\n\n"
                   "def f(x):\n    raise ValidationError(f'bad value {x}')\n"),
        "javascript": ("class ValidationError extends Error {}\n\n"
                       "function f(x) {\n  throw new ValidationError(`bad value ${x}`);\n}\n"),
        "ruby": ("class ValidationError < ArgumentError; end\n\n"
                 "def f(x)\n  raise ValidationError, \"bad value #{x}\"\nend\n"),
        "php": ("class ValidationError extends InvalidArgumentException {}\n\n"
                "function f($x) {\n  throw new ValidationError(\"bad value $x\");\n}\n"),
    }[lang]
    err = err_of(lang, code, args=[7])
    assert err["type"] == "ValidationError", err
    assert "bad value 7" in err["message"], err


def test_stack_points_into_user_code(lang):
    """The stack names user_code.<ext> and the line of the raise; harness frames are removed."""
    code = {
        "python": ("# line 1\n"
                   "def helper(x):\n"
                   "    if x > 0:\n"
                   "        raise RuntimeError('deep')\n"       # line 4
                   "    return x\n"
                   "\n"
                   "def f(x):\n"
                   "    return helper(x)\n"),                   # line 8
        "javascript": ("// line 1\n"
                       "function helper(x) {\n"
                       "  if (x > 0) {\n"
                       "    throw new Error('deep');\n"        # line 4
                       "  }\n"
                       "  return x;\n"
                       "}\n"
                       "function f(x) {\n"
                       "  return helper(x);\n"                 # line 9
                       "}\n"),
        "ruby": ("# line 1\n"
                 "def helper(x)\n"
                 "  if x > 0\n"
                 "    raise 'deep'\n"                         # line 4
                 "  end\n"
                 "  x\n"
                 "end\n"
                 "def f(x)\n"
                 "  helper(x)\n"                              # line 9
                 "end\n"),
        "php": ("<?php\n"
                "function helper($x) {\n"
                "  if ($x > 0) {\n"
                "    throw new RuntimeException('deep');\n"  # line 4
                "  }\n"
                "  return $x;\n"
                "}\n"
                "function f($x) {\n"
                "  return helper($x);\n"                     # line 9
                "}\n"),
    }[lang]
    err = err_of(lang, code, args=[1])
    stack = err.get("stack") or ""
    if lang == "python":
        assert 'user_code.py", line 4' in stack, stack
        assert 'user_code.py", line 8' in stack, stack
    elif lang == "php":
        # PHP's trace names where each call was made: the throw (line 4) and the call to helper (line 9)
        assert "user_code.php(4)" in stack or "user_code.php:4" in stack, stack
        assert "user_code.php(9)" in stack, stack
    else:
        ext = {"javascript": "js", "ruby": "rb"}[lang]
        assert f"user_code.{ext}:4" in stack, stack
        assert f"user_code.{ext}:9" in stack, stack
    assert "harness" not in stack.lower(), f"harness frames leak into the stack:\n{stack}"


def test_js_throw_non_error():
    err = err_of("javascript", "function f() {\n  throw 'plain string thrown';\n}\n")
    assert "plain string thrown" in err["message"], err


def test_python_system_exit():
    res = call(req("python", "import sys\ndef f():\n    sys.exit(3)\n", "f", []))
    err = failed(res)
    assert err["type"] == "SystemExit", err
    assert res.result["exitCode"] == 3


def test_python_exit_zero_is_not_success():
    res = call(req("python", "import sys\ndef f():\n    sys.exit(0)\n", "f", []))
    err = failed(res)
    assert err["type"] == "SystemExit", err


def test_js_process_exit():
    res = call(req("javascript", "function f() {\n  process.exit(5);\n}\n", "f", []))
    err = failed(res)
    assert err["type"] == "ProcessExit", err
    assert res.result["exitCode"] == 5


def test_python_os_exit_no_result():
    """os._exit skips the harness: fd 3 stays empty -> error NoResult with the exit status."""
    res = call(req("python", "import os\ndef f():\n    print('bye', flush=True)\n    os._exit(7)\n", "f", []))
    err = failed(res)
    assert err["type"] == "NoResult", err
    assert res.result["exitCode"] == 7
    assert res.result["stdout"] == "bye\n"


@pytest.mark.parametrize("lang_,code,sig", [
    ("python", "import os, signal\ndef f():\n    os.kill(os.getpid(), signal.SIGSEGV)\n", 11),
    ("javascript", "function f() {\n  process.kill(process.pid, 'SIGKILL');\n}\n", 9),
    # Ruby's own SIGSEGV handler prints a "[BUG] Segmentation fault" report and then abort()s: SIGABRT
    ("ruby", "def f\n  Process.kill(:SEGV, Process.pid)\n  sleep 5\nend\n", 6),
    ("ruby", "def f\n  Process.kill(:KILL, Process.pid)\n  sleep 5\nend\n", 9),
    # the posix extension is part of Debian's php-cli (checked below, never skipped silently)
    ("php", "function f() {\n  posix_kill(posix_getpid(), 11);\n  sleep(5);\n}\n", 11),
    ("php", "function f() {\n  posix_kill(posix_getpid(), 6);\n  sleep(5);\n}\n", 6),
])
def test_killed_by_signal_is_crash(lang_, code, sig):
    if lang_ == "php":
        assert ok(call(req("php", "function f() { return function_exists('posix_kill'); }", "f", []))) is True, \
            "the PHP posix extension is missing: install php-cli's posix module (Debian ships it)"
    res = call(req(lang_, code, "f", [], timeout=20))
    err = failed(res, status="crash")
    assert res.result["exitCode"] == 128 + sig
    assert err["type"] == "Crash" and f"signal {sig}" in err["message"], err
    if lang_ == "ruby" and sig == 6:
        assert "Segmentation fault" in res.result["stderr"], describe(res.result)


@pytest.mark.parametrize("lang_,code,etype,code_", [
    ("python", "import sys\ndef f():\n    sys.exit(3)\n", "SystemExit", 3),
    ("javascript", "function f() {\n  process.exit(3);\n}\n", "ProcessExit", 3),
    ("ruby", "def f\n  exit(3)\nend\n", "SystemExit", 3),
    ("ruby", "def f\n  abort('gave up')\nend\n", "SystemExit", 1),
    ("php", "function f() {\n  exit(3);\n}\n", "SystemExit", 3),
])
def test_exit_is_an_error(lang_, code, etype, code_):
    """Every language's exit is an error carrying its status, never a success."""
    res = call(req(lang_, code, "f", []))
    err = failed(res)
    assert err["type"] == etype, err
    assert res.result["exitCode"] == code_


def test_syntax_error(lang):
    code = {
        "python": "def ok():\n    return 1\n\ndef f(:\n    return 2\n",        # error on line 4
        "javascript": "function ok() {\n  return 1;\n}\nlet x = ;\nfunction f() {\n  return 2;\n}\n",
        "ruby": "def ok\n  1\nend\nx = )\ndef f\n  2\nend\n",
        "php": "<?php\nfunction ok() {\n  return 1;\n}\n$x = ;\nfunction f() {\n  return 2;\n}\n",    # line 5
    }[lang]
    res = call(req(lang, code, "f", []))
    err = failed(res)
    # PHP's own class for a syntax error is ParseError (what `catch (ParseError $e)` sees): kept as is.
    assert err["type"] == ("ParseError" if lang == "php" else "SyntaxError"), err
    text = err["message"] + "\n" + (err.get("stack") or "")
    if lang == "python":
        assert "line 4" in text, text
    elif lang == "ruby":
        assert "user_code.rb:4" in text, text
    elif lang == "php":
        assert "line 5" in text or "user_code.php(5)" in text or "user_code.php:5" in text, text
    else:
        assert "user_code.js:4" in text or "line 4" in text, text


def test_missing_function(lang):
    code = {"python": "def present():\n    return 1\n",
            "javascript": "function present() {\n  return 1;\n}\n",
            "ruby": "def present\n  1\nend\n",
            "php": "function present() {\n  return 1;\n}\n"}[lang]
    err = err_of(lang, code, fn="absent_fn")
    assert err["type"] == "FunctionNotFound", err
    assert "absent_fn" in err["message"], err


def test_function_name_not_callable(lang):
    code = {"python": "absent_fn = 5\n", "javascript": "var absent_fn = 5;\n", "ruby": "absent_fn = 5\n",
            "php": "$absent_fn = 5;\n"}[lang]
    err = err_of(lang, code, fn="absent_fn")
    assert err["type"] == "FunctionNotFound", err


def test_ambiguous_function_omitted(lang):
    """functionName omitted and several top-level functions: an error listing them, nothing runs."""
    code = {
        "python": "def alpha_fn():\n    print('ran')\n    return 1\n\ndef beta_fn():\n    return 2\n",
        "javascript": "function alpha_fn() {\n  console.log('ran');\n  return 1;\n}\n"
                      "function beta_fn() {\n  return 2;\n}\n",
        "ruby": "def alpha_fn\n  puts 'ran'\n  1\nend\n\ndef beta_fn\n  2\nend\n",
        "php": "function alpha_fn() {\n  echo 'ran';\n  return 1;\n}\nfunction beta_fn() {\n  return 2;\n}\n",
    }[lang]
    result, rc, _ = call({"language": lang, "code": code})
    assert result["status"] == "error", describe(result)
    assert "alpha_fn" in result["error"]["message"] and "beta_fn" in result["error"]["message"], describe(result)
    assert "ran" not in (result.get("stdout") or "")


def test_single_function_auto_selected(lang):
    """Exactly one top-level function: it is called (nested functions and methods do not count)."""
    code = {
        "python": ("import math\n\nLIMIT = 10\n\nclass Helper:\n    def method(self):\n        return 0\n\n"
                   "def outer(x):\n    def inner(y):\n        return y * 2\n    return inner(x) + LIMIT\n"),
        "javascript": ("const LIMIT = 10;\nclass Helper {\n  method() { return 0; }\n}\n"
                       "function outer(x) {\n  function inner(y) { return y * 2; }\n  return inner(x) + LIMIT;\n}\n"),
        "ruby": ("LIMIT = 10\n\nclass Helper\n  def method_a\n    0\n  end\nend\n\n"
                 "def outer(x)\n  inner = ->(y) { y * 2 }\n  inner.call(x) + LIMIT\nend\n"),
        "php": ("const LIMIT = 10;\nclass Helper {\n  public function method() { return 0; }\n}\n"
                "function outer($x) {\n  $inner = function ($y) { return $y * 2; };\n  return $inner($x) + LIMIT;\n}\n"),
    }[lang]
    assert ok(call({"language": lang, "code": code, "args": [16]})) == 42


def test_body_mode_last_expression(lang):
    """The value of the last expression. PHP has no such notion (a script's value is what it returns), so
    the PHP body ends with `return`."""
    code = {
        "python": "x = 6\ny = 7\nprint('side effect')\nx * y\n",
        "javascript": "const x = 6;\nconst y = 7;\nconsole.log('side effect');\nx * y;\n",
        "ruby": "x = 6\ny = 7\nputs 'side effect'\nx * y\n",
        "php": "$x = 6;\n$y = 7;\necho \"side effect\\n\";\nreturn $x * $y;\n",
    }[lang]
    res = call({"language": lang, "code": code})
    assert ok(res) == 42
    assert res.result["stdout"] == "side effect\n"


def test_body_mode_top_level_return(lang):
    code = {
        "python": "import math\nvalues = [1, 2, 3]\nif values:\n    return {'sum': sum(values), 'pi': round(math.pi, 2)}\n"
                  "return None\n",
        "javascript": "const v = await Promise.resolve(41);\nif (v > 0) {\n  return { sum: v + 1 };\n}\nreturn null;\n",
        "ruby": "values = [1, 2, 3]\nreturn { 'sum' => values.sum, 'pi' => Math::PI.round(2) } if values.any?\nnil\n",
        "php": "$values = [1, 2, 3];\nif ($values) {\n  return ['sum' => array_sum($values), 'pi' => round(M_PI, 2)];\n}\nreturn null;\n",
    }[lang]
    got = ok(call({"language": lang, "code": code}))
    if lang in ("python", "ruby", "php"):
        assert got == {"sum": 6, "pi": 3.14}
    else:
        assert got == {"sum": 42}


def test_body_mode_error(lang):
    code = {"python": "x = 1\nraise KeyError('nope')\n",
            "javascript": "const x = 1;\nthrow new RangeError('nope');\n",
            "ruby": "x = 1\nraise IndexError, 'nope'\n",
            "php": "$x = 1;\nthrow new LengthException('nope');\n"}[lang]
    res = call({"language": lang, "code": code})
    err = failed(res)
    assert err["type"] == {"python": "KeyError", "javascript": "RangeError", "ruby": "IndexError",
                           "php": "LengthException"}[lang]
    assert "nope" in err["message"], err
