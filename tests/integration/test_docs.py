"""The README and the user guide (docs/guide/) stay true: every example parses, every relative link leads to
a file, and the blocks marked runnable give the output shown when run against the build.

- ```json blocks parse: one document, one document per line, or members of an object (`"files": {...}`);
  `//` comments are taken out first (the request examples annotate their fields).
- ```sh blocks are valid shell (`bash -n`); in a block whose lines start with `$ `, those are the commands
  and the others their output.
- ```python blocks compile, ```js blocks pass `node --check` (as an ES module).
- A block preceded by `<!-- runnable -->` is run: each `$ ` command in the repository's root, with
  `./build/fnbox` the binary under test, must exit 0 and print its output lines, where `...` stands for any
  text and white space may be added or taken away (a long line shown wrapped).
"""
import json
import re
import subprocess
from pathlib import Path

import pytest

from fnboxlib import FNBOX, REPO, require_binary

PAGES = [REPO / "README.md", *sorted((REPO / "docs" / "guide").glob("*.md"))]
FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[\w+-]*)\n(?P<body>.*?)^(?P=indent)```", re.S | re.M)
RUNNABLE = "<!-- runnable -->"


def blocks():
    for page in PAGES:
        text = page.read_text()
        for m in FENCE.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            before = text[:m.start()].rstrip().rsplit("\n", 1)[-1].strip()
            indent = len(m.group("indent"))
            body = "\n".join(l[indent:] for l in m.group("body").split("\n"))
            yield page, line, m.group("lang"), body, before == RUNNABLE


def ids(params):
    return [f"{p.relative_to(REPO)}:{line}" for p, line, *_ in params]


ALL = list(blocks())
JSON_BLOCKS = [b for b in ALL if b[2] == "json"]
SH_BLOCKS = [b for b in ALL if b[2] in ("sh", "bash", "console")]
RUN_BLOCKS = [b for b in ALL if b[4]]


def test_the_readme_is_a_first_stop():
    lines = (REPO / "README.md").read_text().count("\n")
    assert lines <= 250, f"README.md has {lines} lines: the reference belongs in docs/guide/"
    assert RUN_BLOCKS, "no runnable example is marked"


def strip_comments(text):
    """`//` to the end of the line, outside JSON strings."""
    out = []
    for line in text.split("\n"):
        in_str = esc = False
        for i, ch in enumerate(line):
            if in_str:
                esc = not esc and ch == "\\"
                if ch == '"' and not esc:
                    in_str = False
                continue
            if ch == '"':
                in_str = True
            elif line.startswith("//", i):
                line = line[:i]
                break
        out.append(line)
    return "\n".join(out)


def parses(body):
    body = strip_comments(body).strip()
    tries = [lambda: json.loads(body),
             lambda: [json.loads(l) for l in body.split("\n") if l.strip()],
             lambda: json.loads("{" + body.rstrip(",") + "}")]
    errors = []
    for attempt in tries:
        try:
            attempt()
            return None
        except ValueError as e:
            errors.append(str(e))
    return errors[0]


@pytest.mark.parametrize("page,line,lang,body,runnable", JSON_BLOCKS, ids=ids(JSON_BLOCKS))
def test_json_examples_parse(page, line, lang, body, runnable):
    err = parses(body)
    assert err is None, f"{page.relative_to(REPO)}:{line}: the json example does not parse: {err}"


def test_json_check_catches_a_broken_example():
    assert parses('{"a": 1, // a comment\n "b": [1, 2]}') is None
    assert parses('"files": {"x": "y"},\n"mount": {}') is None
    assert parses('{"result": ...}') is not None
    assert parses('{"a": 1,}') is not None


def commands_of(body):
    """(command, expected output lines) pairs of a `$ ` block; None when the block is a plain script."""
    if not any(l.startswith("$ ") for l in body.split("\n")):
        return None
    pairs = []
    for l in body.rstrip("\n").split("\n"):
        if l.startswith("$ "):
            pairs.append((l[2:], []))
        elif pairs:
            pairs[-1][1].append(l)
    return pairs


@pytest.mark.parametrize("page,line,lang,body,runnable", SH_BLOCKS, ids=ids(SH_BLOCKS))
def test_shell_examples_are_valid_shell(page, line, lang, body, runnable):
    pairs = commands_of(body)
    script = "\n".join(c for c, _ in pairs) if pairs is not None else body
    r = subprocess.run(["bash", "-n"], input=script, capture_output=True, text=True)
    assert r.returncode == 0, f"{page.relative_to(REPO)}:{line}: not valid shell: {r.stderr}"


@pytest.mark.parametrize("page,line,lang,body,runnable", [b for b in ALL if b[2] == "python"],
                         ids=ids([b for b in ALL if b[2] == "python"]))
def test_python_examples_compile(page, line, lang, body, runnable):
    compile(body, f"{page.name}:{line}", "exec")


@pytest.mark.parametrize("page,line,lang,body,runnable", [b for b in ALL if b[2] in ("js", "javascript")],
                         ids=ids([b for b in ALL if b[2] in ("js", "javascript")]))
def test_javascript_examples_parse(page, line, lang, body, runnable, tmp_path):
    src = tmp_path / "example.mjs"
    src.write_text(body)
    r = subprocess.run(["node", "--check", str(src)], capture_output=True, text=True)
    assert r.returncode == 0, f"{page.relative_to(REPO)}:{line}: {r.stderr}"


def output_pattern(expected):
    """The shown output as a regex: `...` is any text; white space is optional (shown lines wrap)."""
    text = "\n".join(expected).strip()
    parts = [r"\s*".join(re.escape(w) for w in piece.split()) for piece in text.split("...")]
    return re.compile(r"\s*" + ".*?".join(parts) + r"\s*", re.S)


@pytest.mark.parametrize("page,line,lang,body,runnable", RUN_BLOCKS, ids=ids(RUN_BLOCKS))
def test_runnable_examples_print_what_is_shown(page, line, lang, body, runnable):
    require_binary()
    pairs = commands_of(body)
    assert pairs, f"{page.relative_to(REPO)}:{line}: a runnable block needs `$ ` commands"
    for command, expected in pairs:
        command = command.replace("./build/fnbox", FNBOX)
        r = subprocess.run(["bash", "-c", command], cwd=REPO, capture_output=True, text=True, timeout=120)
        where = f"{page.relative_to(REPO)}:{line}: `{command}`"
        assert r.returncode == 0, f"{where} exited {r.returncode}: {r.stderr[-2000:]}"
        if expected:
            assert output_pattern(expected).fullmatch(r.stdout), \
                f"{where} printed\n{r.stdout[:3000]}\nnot what the page shows:\n" + "\n".join(expected)


def test_output_pattern_matches_only_what_is_shown():
    shown = ['{"status":"success","result":"Hi, World!", ...}']
    assert output_pattern(shown).fullmatch('{"status":"success","result":"Hi, World!","stdout":""}\n')
    assert not output_pattern(shown).fullmatch('{"status":"error","result":"Hi, World!"}\n')


LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)")


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(REPO)) for p in PAGES])
def test_relative_links_lead_to_files(page):
    text = page.read_text()
    broken = []
    for m in LINK.finditer(text):
        target = m.group("target")
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            continue
        path = target.split("#", 1)[0]
        if not (page.parent / path).exists():
            broken.append(target)
    assert not broken, f"{page.relative_to(REPO)}: links to missing files: {broken}"


def test_install_commands_shown_are_the_tested_ones():
    """The README and the guide show the Python client's Debian route as clients/python/README.md's marked
    block has it, which clients/python/tests/test_install.py runs line by line."""
    client = (REPO / "clients" / "python" / "README.md").read_text()
    marker = client.index("<!-- install: debian")
    tested = FENCE.search(client, marker).group("body").split("\n")
    for page in (REPO / "README.md", REPO / "docs" / "guide" / "install.md"):
        shown = [l.split("#", 1)[0].strip() for l in page.read_text().split("\n")
                 if "/bin/pip install --no-index" in l or "-m venv --system-site-packages" in l]
        assert shown, f"{page.name} shows no Python client install"
        for line in shown:
            assert line in [t.strip() for t in tested], f"{page.name}: `{line}` is not the tested command"
