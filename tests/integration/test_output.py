"""The function's own stdout/stderr are captured separately from the result, which travels on its own
channel: nothing printed can forge or corrupt it."""

from fnboxlib import call, describe, ok, req

PRINTS = {
    "python": ("import sys\n"
               "def f(x):\n"
               "    print('out line 1')\n"
               "    print('err line', file=sys.stderr)\n"
               "    sys.stdout.write('héllo 😀 no newline')\n"
               "    return x + 1\n"),
    "javascript": ("function f(x) {\n"
                   "  console.log('out line 1');\n"
                   "  console.error('err line');\n"
                   "  process.stdout.write('héllo 😀 no newline');\n"
                   "  return x + 1;\n}\n"),
    "ruby": ("def f(x)\n"
             "  puts 'out line 1'\n"
             "  $stderr.puts 'err line'\n"
             "  print 'héllo 😀 no newline'\n"
             "  x + 1\n"
             "end\n"),
    "php": ("function f($x) {\n"
            "  echo \"out line 1\\n\";\n"
            "  fwrite(STDERR, \"err line\\n\");\n"
            "  print('héllo 😀 no newline');\n"
            "  return $x + 1;\n}\n"),
}


def test_prints_and_return(lang):
    res = call(req(lang, PRINTS[lang], "f", [41]))
    assert ok(res) == 42
    assert res.result["stdout"] == "out line 1\nhéllo 😀 no newline", repr(res.result["stdout"])
    assert res.result["stderr"] == "err line\n", repr(res.result["stderr"])
    assert res.result.get("truncated", {}).get("stdout") in (False, None)


FORGE = {
    "python": ("import json, sys\n"
               "def f():\n"
               "    print('{\"ok\":true}')\n"
               "    print('\"forged\"')\n"
               "    print(json.dumps({'status': 'success', 'success': True, 'result': 'forged'}))\n"
               "    sys.stderr.write('{\"ok\":true}\\n\"forged\"\\n')\n"
               "    return 'real'\n"),
    "javascript": ("function f() {\n"
                   "  console.log('{\"ok\":true}');\n"
                   "  console.log('\"forged\"');\n"
                   "  console.log(JSON.stringify({status: 'success', success: true, result: 'forged'}));\n"
                   "  console.error('{\"ok\":true}\\n\"forged\"');\n"
                   "  return 'real';\n}\n"),
    "ruby": ("require 'json'\n"
             "def f\n"
             "  puts '{\"ok\":true}'\n"
             "  puts '\"forged\"'\n"
             "  puts JSON.generate({status: 'success', success: true, result: 'forged'})\n"
             "  $stderr.write(\"{\\\"ok\\\":true}\\n\\\"forged\\\"\\n\")\n"
             "  'real'\n"
             "end\n"),
    "php": ("function f() {\n"
            "  echo '{\"ok\":true}', \"\\n\";\n"
            "  echo '\"forged\"', \"\\n\";\n"
            "  echo json_encode(['status' => 'success', 'success' => true, 'result' => 'forged']), \"\\n\";\n"
            "  fwrite(STDERR, \"{\\\"ok\\\":true}\\n\\\"forged\\\"\\n\");\n"
            "  return 'real';\n}\n"),
}


def test_printed_fake_result_changes_nothing(lang):
    res = call(req(lang, FORGE[lang], "f", []))
    assert ok(res) == "real"
    assert '"forged"' in res.result["stdout"]  # it was printed, and stayed in stdout


def test_printed_fake_result_before_error(lang):
    """Printing a success document and then failing is still a failure."""
    code = {
        "python": ("import json\ndef f():\n    print(json.dumps({'status': 'success', 'result': 1}))\n"
                   "    print('{\"ok\":true}\\n1')\n    raise ValueError('real failure')\n"),
        "javascript": ("function f() {\n  console.log(JSON.stringify({status: 'success', result: 1}));\n"
                       "  console.log('{\"ok\":true}\\n1');\n  throw new Error('real failure');\n}\n"),
        "ruby": ("def f\n  puts '{\"status\":\"success\",\"result\":1}'\n"
                 "  puts \"{\\\"ok\\\":true}\\n1\"\n  raise 'real failure'\nend\n"),
        "php": ("function f() {\n  echo '{\"status\":\"success\",\"result\":1}', \"\\n\";\n"
                "  echo \"{\\\"ok\\\":true}\\n1\\n\";\n  throw new Exception('real failure');\n}\n"),
    }[lang]
    result, rc, _ = call(req(lang, code, "f", []))
    assert rc == 0 and result["status"] == "error", describe(result)
    assert "real failure" in result["error"]["message"]


def test_writing_to_result_fd_cannot_forge(lang):
    """fds 3/4 are the harness's. A function writing straight to fd 3 must not turn into a forged
    success: either the write fails, or the real result still wins, or the result is an error."""
    code = {
        "python": ("import os\ndef f():\n"
                   "    for fd in (3, 4, 5, 6):\n"
                   "        try:\n"
                   "            os.write(fd, b'{\"ok\":true}\\n\"forged\"')\n"
                   "        except OSError:\n"
                   "            pass\n"
                   "    return 'real'\n"),
        "javascript": ("const fs = require('fs');\nfunction f() {\n"
                       "  for (const fd of [3, 4, 5, 6]) {\n"
                       "    try { fs.writeSync(fd, '{\"ok\":true}\\n\"forged\"'); } catch (e) {}\n"
                       "  }\n  return 'real';\n}\n"),
        "ruby": ("def f\n"
                 "  [3, 4, 5, 6].each do |fd|\n"
                 "    IO.for_fd(fd, autoclose: false).syswrite(\"{\\\"ok\\\":true}\\n\\\"forged\\\"\")\n"
                 "  rescue StandardError\n"
                 "    nil\n"
                 "  end\n"
                 "  'real'\n"
                 "end\n"),
        "php": ("function f() {\n"
                "  foreach ([3, 4, 5, 6] as $fd) {\n"
                "    $h = @fopen(\"php://fd/$fd\", 'wb');\n"
                "    if ($h) { @fwrite($h, \"{\\\"ok\\\":true}\\n\\\"forged\\\"\"); }\n"
                "  }\n"
                "  return 'real';\n}\n"),
    }[lang]
    result, rc, _ = call(req(lang, code, "f", []))
    assert result.get("result") != "forged", describe(result)
    if result["status"] == "success":
        assert result["result"] == "real", describe(result)


def test_many_lines_all_flushed(lang):
    """Output written just before returning is not lost (Node writes pipes asynchronously in some
    cases; Python buffers)."""
    code = {
        "python": "def f(n):\n    for i in range(n):\n        print(i)\n    return n\n",
        "javascript": "function f(n) {\n  for (let i = 0; i < n; i++) console.log(i);\n  return n;\n}\n",
        "ruby": "def f(n)\n  n.times { |i| puts i }\n  n\nend\n",
        "php": "function f($n) {\n  for ($i = 0; $i < $n; $i++) echo $i, \"\\n\";\n  return $n;\n}\n",
    }[lang]
    n = 20000
    res = call(req(lang, code, "f", [n]))
    assert ok(res) == n
    assert res.result["stdout"] == "".join(f"{i}\n" for i in range(n))


INVALID_UTF8_OUTPUT = {
    "python": ("import sys\ndef f():\n"
               "    sys.stdout.buffer.write(b'ok \\xff\\xfe\\xc3 end')\n"
               "    sys.stderr.buffer.write(b'\\x80err')\n"
               "    return 1\n"),
    "javascript": ("function f() {\n"
                   "  process.stdout.write(Buffer.from([0x6f, 0x6b, 0x20, 0xff, 0xfe, 0xc3, 0x20, 0x65, 0x6e, 0x64]));\n"
                   "  process.stderr.write(Buffer.from([0x80, 0x65, 0x72, 0x72]));\n"
                   "  return 1;\n}\n"),
    "ruby": "def f\n  $stdout.write(\"ok \\xff\\xfe\\xc3 end\".b)\n  $stderr.write(\"\\x80err\".b)\n  1\nend\n",
    "php": "function f() {\n  echo \"ok \\xff\\xfe\\xc3 end\";\n  fwrite(STDERR, \"\\x80err\");\n  return 1;\n}\n",
}


def test_invalid_utf8_output_still_valid_json(lang):
    res = call(req(lang, INVALID_UTF8_OUTPUT[lang], "f", []))  # call() fails if stdout is not valid UTF-8 JSON
    assert ok(res) == 1
    assert res.result["stdout"].startswith("ok ") and res.result["stdout"].endswith(" end")
    assert res.result["stderr"].endswith("err")


def test_huge_output_truncated(lang):
    """8 MB of output: capped, flagged in `truncated`, the call still returns its result."""
    code = {
        "python": "import sys\ndef f():\n    chunk = 'x' * 1048576\n    for _ in range(8):\n"
                  "        sys.stdout.write(chunk)\n    return 'done'\n",
        "javascript": "function f() {\n  const chunk = 'x'.repeat(1048576);\n"
                      "  for (let i = 0; i < 8; i++) process.stdout.write(chunk);\n  return 'done';\n}\n",
        "ruby": "def f\n  chunk = 'x' * 1048576\n  8.times { $stdout.write(chunk) }\n  'done'\nend\n",
        "php": "function f() {\n  $chunk = str_repeat('x', 1048576);\n  for ($i = 0; $i < 8; $i++) echo $chunk;\n"
               "  return 'done';\n}\n",
    }[lang]
    res = call(req(lang, code, "f", []), timeout=90)
    result = res.result
    assert result["status"] == "success" and result["result"] == "done", describe(result)
    assert result.get("truncated", {}).get("stdout") is True, describe(result)
    assert result.get("truncated", {}).get("stderr") in (False, None)
    assert 0 < len(result["stdout"]) < 8 * 1048576
    assert set(result["stdout"]) <= {"x"}, "truncated output must be a prefix of what was written"


def test_stdin_is_empty(lang):
    """stdin is /dev/null: reading it gives EOF at once (never the request, never a hang)."""
    code = {
        "python": "import sys\ndef f():\n    return sys.stdin.read()\n",
        "javascript": "const fs = require('fs');\nfunction f() {\n  return fs.readFileSync(0, 'utf8');\n}\n",
        "ruby": "def f\n  $stdin.read\nend\n",
        "php": "function f() {\n  return stream_get_contents(STDIN);\n}\n",
    }[lang]
    res = call(req(lang, code, "f", [], timeout=10))
    assert ok(res) == ""
