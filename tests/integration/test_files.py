"""Virtual files (`files`) and change tracking of the scratch space (workdir, /tmp, /dev/shm)."""
import base64

from fnboxlib import call, describe, ok, req

PY_RW = ("import os\n"
         "def f():\n"
         "    with open('input.txt') as fh: data = fh.read()\n"
         "    with open('out/upper.txt', 'w') as fh: fh.write(data.upper())\n"
         "    return data\n")


def paths(result, kind):
    return sorted(c["path"] for c in result["files"][kind])


def by_path(result, kind):
    return {c["path"]: c for c in result["files"][kind]}


def test_text_file_reaches_function_and_output_is_reported():
    code = ("import os\n"
            "def f():\n"
            "    data = open('input.txt').read()\n"
            "    os.makedirs('out', exist_ok=True)\n"
            "    open('out/upper.txt', 'w').write(data.upper())\n"
            "    return data\n")
    res = call(req("python", code, "f", files={"input.txt": "hello world"}))
    assert ok(res) == "hello world"
    created = by_path(res.result, "created")
    assert created["/workspace/out/upper.txt"] == {"path": "/workspace/out/upper.txt", "type": "file",
                                                   "size": 11, "content": "HELLO WORLD"}
    assert created["/workspace/out"]["type"] == "directory"
    # the input file itself was not changed, so it is not reported
    assert "/workspace/input.txt" not in created and res.result["files"]["modified"] == []


def test_binary_file_round_trip_as_base64():
    blob = bytes(range(256)) * 4
    code = ("def f():\n"
            "    data = open('/workspace/blob.bin', 'rb').read()\n"
            "    open('/tmp/rev.bin', 'wb').write(data[::-1])\n"
            "    return len(data)\n")
    res = call(req("python", code, "f", files={"blob.bin": {"base64": base64.b64encode(blob).decode()}}))
    assert ok(res) == 1024
    got = by_path(res.result, "created")["/tmp/rev.bin"]
    assert got["size"] == 1024
    assert base64.b64decode(got["content"]["base64"]) == blob[::-1]


def test_modified_and_deleted_are_reported_identical_rewrite_is_not():
    code = ("import os\n"
            "def f():\n"
            "    open('same.txt', 'w').write('unchanged')\n"      # identical rewrite: not a modification
            "    open('edit.txt', 'a').write('+more')\n"
            "    os.remove('gone.txt')\n")
    res = call(req("python", code, "f",
                   files={"same.txt": "unchanged", "edit.txt": "base", "gone.txt": "bye"}))
    ok(res)
    assert paths(res.result, "modified") == ["/workspace/edit.txt"], describe(res.result)
    assert by_path(res.result, "modified")["/workspace/edit.txt"]["content"] == "base+more"
    assert paths(res.result, "deleted") == ["/workspace/gone.txt"]
    assert paths(res.result, "created") == []


def test_absolute_paths_and_workdir():
    code = ("import os\n"
            "def f():\n"
            "    return [os.getcwd(), open('/tmp/a.txt').read(), open('rel.txt').read()]\n")
    res = call(req("python", code, "f", workdir="/app",
                   files={"/tmp/a.txt": "A", "rel.txt": "R"}))
    assert ok(res) == ["/app", "A", "R"]


def test_include_options_turn_reporting_off():
    code = "def f():\n    open('x.txt', 'w').write('x')\n"
    res = call(req("python", code, "f", resultOptions={"includeContents": False}))
    c = by_path(res.result, "created")["/workspace/x.txt"]
    assert "content" not in c and c["size"] == 1
    res = call(req("python", code, "f", resultOptions={"includeChanges": False}))
    assert "files" not in res.result  # the seed leaves files undefined, not an empty summary


def test_javascript_sees_files_too():
    code = ("const fs = require('fs');\n"
            "function f() { fs.writeFileSync('/dev/shm/o.txt', fs.readFileSync('i.txt', 'utf8') + '!'); }\n")
    res = call(req("javascript", code, "f", files={"i.txt": "hi"}))
    ok(res)
    assert by_path(res.result, "created")["/dev/shm/o.txt"]["content"] == "hi!"


def test_bad_files_are_refused_naming_the_field():
    cases = [
        ({"../escape.txt": "x"}, "files[\"../escape.txt\"]"),
        ({"/etc/passwd": "x"}, "files[\"/etc/passwd\"]: /etc/passwd is in a read-only system directory"),
        ({"a.txt": 42}, "files[\"a.txt\"]: must be a string"),
        ({"a.bin": {"base64": "!!!"}}, "base64"),
        ({"bad\nname": "x"}, "control characters"),
        ({"": "x"}, "empty"),
    ]
    for files, needle in cases:
        res = call(req("python", "def f(): pass\n", "f", files=files))
        assert res.code == 2, describe(res.result)
        assert res.result["error"]["type"] == "InvalidRequest"
        assert needle in res.result["error"]["message"], res.result["error"]["message"]
    res = call(req("python", "def f(): pass\n", "f", files=["a"]))
    assert res.code == 2 and "files: must be an object" in res.result["error"]["message"]


def test_harness_and_runtime_files_are_never_reported():
    code = ("import json, subprocess\n"
            "def f():\n"
            "    return 1\n")
    for lang, src in (("python", code), ("javascript", "function f() { return 1; }\n"),
                      ("ruby", "def f\n  1\nend\n"), ("php", "function f() { return 1; }\n")):
        res = call(req(lang, src, "f"))
        assert ok(res) == 1
        files = res.result["files"]
        assert files["created"] == [] and files["modified"] == [] and files["deleted"] == [], (lang, files)
