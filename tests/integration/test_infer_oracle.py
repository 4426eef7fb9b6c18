"""Oracle tests for the hand-written signature scanners (src/lang/{python,javascript,ruby,php}_infer.c).

A corpus of real-world function headers (oracle/corpus.py) goes through the scanners and through each language's
own parser, and the two must agree on every top-level function: its name, whether it is async, and each
parameter's name, kind (positional, positional-only, keyword-only, *rest, **rest, destructured), whether it has a
default and what that default means (both texts parsed by the language's parser and compared as syntax trees,
or PHP token lists), plus Python annotations and the keys of a destructured JavaScript object.

- The scanners' side is oracle/sigdump.c, built by `make unit` against the library under test (next to $FNBOX:
  build/tests/oracle/sigdump, or build-asan/... in the sanitizer pass): it prints what fb_infer_<language> found.
- The oracles: Python's `ast` (this interpreter, /usr/bin/python3), Ruby's Ripper (oracle/rb_oracle.rb), PHP's
  ReflectionFunction and token_get_all (oracle/php_oracle.php) and acorn (Debian's node-acorn, installed by
  scripts/install-deps.sh; oracle/js_oracle.js). Each script's header says which functions it reports.
- `fnbox infer` itself is checked against the oracle for every function: the properties in order, `required`,
  `additionalProperties` for a **rest, the variadic note for a *rest, a destructured object's keys.

A case where the scanner is wrong and the fix is not small is listed in KNOWN_GAPS: xfail(strict=True), so it
fails the day the scanner gets it right. An oracle that cannot run skips these tests, except with CI=true, where
it fails."""
import ast
import importlib.util
import json
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest

from fnboxlib import FNBOX, parse_one_result, run_cli, skip_unless_ci

HERE = os.path.dirname(os.path.abspath(__file__))
ORACLE = os.path.join(HERE, "oracle")
_spec = importlib.util.spec_from_file_location("infer_oracle_corpus", os.path.join(ORACLE, "corpus.py"))
_corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_corpus)
CORPUS = _corpus.CORPUS

SIGDUMP = os.path.join(os.path.dirname(FNBOX), "tests", "oracle", "sigdump")
SCRIPTS = {"javascript": ["node", os.path.join(ORACLE, "js_oracle.js")],
           "ruby": ["ruby", "--disable-gems", os.path.join(ORACLE, "rb_oracle.rb")],
           "php": ["php", os.path.join(ORACLE, "php_oracle.php")]}
VARIADIC_NOTE = "Also takes extra positional arguments (variadic), which are not listed as parameters."

# (language, label) -> why the scanner gets it wrong. Each is an xfail(strict=True).
KNOWN_GAPS = {
    ("ruby", "heredoc default"):
        "a heredoc default's text is its opener (`<<~EOS`): the body, on the lines after the def, is not part "
        "of it (the parameter and that it has a default are right)",
    ("ruby", "setter-like and operator names"):
        "`def value=(v)`, `def <=>(other)`, `def [](i)` are not read as definitions (the defs after them are)",
}

CASES = [(lang, label, code) for lang, entries in CORPUS.items() for label, code in entries]


def run_json(argv, payload, what):
    """What the program prints for the JSON payload; skips (fails in CI) if an oracle cannot run here."""
    try:
        proc = subprocess.run(argv, input=json.dumps(payload).encode(), capture_output=True, timeout=120)
    except FileNotFoundError as e:
        skip_unless_ci(f"{what}: {e}")
    if proc.returncode == 3 and argv[0] == "node":
        skip_unless_ci(f"{what}: {proc.stderr.decode(errors='replace').strip()}")
    assert proc.returncode == 0, f"{what} exited {proc.returncode}: {proc.stderr.decode(errors='replace')[-3000:]}"
    return json.loads(proc.stdout)


# ---- the Python oracle: ast, in this process ----

def python_functions(code):
    try:
        tree = ast.parse(code)
    except SyntaxError as e:
        return {"error": f"SyntaxError: {e}"}
    out = []
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        a = node.args
        params = []

        def add(arg, kind, default=None):
            params.append({"name": arg.arg, "kind": kind, "default": default, "annotation": arg.annotation})
        positional = [(p, "positional_only") for p in a.posonlyargs] + [(p, "positional") for p in a.args]
        defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
        for (p, kind), d in zip(positional, defaults):
            add(p, kind, d)
        if a.vararg:
            add(a.vararg, "var_positional")
        for p, d in zip(a.kwonlyargs, a.kw_defaults):
            add(p, "keyword_only", d)
        if a.kwarg:
            add(a.kwarg, "var_keyword")
        out.append({"name": node.name, "async": isinstance(node, ast.AsyncFunctionDef), "params": params})
    return out


def python_expr(text):
    """The syntax tree of an expression; a starred one (`*Ts`, a *args annotation) where Python allows it."""
    try:
        return ast.dump(ast.parse(text, mode="eval").body)
    except SyntaxError as e:
        try:
            return ast.dump(ast.parse(f"def _(*_: {text}): pass").body[0].args.vararg.annotation)
        except SyntaxError:
            return {"error": f"SyntaxError: {e}"}


# ---- running everything once ----

@pytest.fixture(scope="module")
def scanned():
    """{(lang, label): the scanner's functions}, from one sigdump run over the whole corpus."""
    assert os.access(SIGDUMP, os.X_OK), f"{SIGDUMP} missing: `make unit` builds it next to {FNBOX}"
    out = run_json([SIGDUMP], [{"language": lang, "code": code} for lang, _, code in CASES], "sigdump")
    return {case[:2]: funcs for case, funcs in zip(CASES, out)}


ORACLE_RUNS = {}    # lang -> ({label: oracle functions}, {default text: parsed}) or the reason it cannot run


def oracle(lang, scanned):
    """One oracle run per language over its whole corpus (and every default text its scanner reported)."""
    if lang not in ORACLE_RUNS:
        labels = [label for case_lang, label, _ in CASES if case_lang == lang]
        codes = [code for case_lang, _, code in CASES if case_lang == lang]
        texts = sorted({p["default"] for label in labels if isinstance(scanned[(lang, label)], list)
                        for f in scanned[(lang, label)] for p in f["params"] if p["default"] is not None})
        try:
            if lang == "python":
                wants, exprs = [python_functions(c) for c in codes], {t: python_expr(t) for t in texts}
            else:
                got = run_json(SCRIPTS[lang], {"sources": codes, "exprs": texts}, f"the {lang} oracle")
                wants, exprs = got["sources"], dict(zip(texts, got["exprs"]))
            ORACLE_RUNS[lang] = (dict(zip(labels, wants)), exprs)
        except pytest.skip.Exception as e:
            ORACLE_RUNS[lang] = str(e)
    run = ORACLE_RUNS[lang]
    if isinstance(run, str):
        skip_unless_ci(run)
    return run


def shape(funcs):
    return [(f["name"], f["async"], [(p["name"], p["kind"], p["default"] is not None) for p in f["params"]])
            for f in funcs]


def compare(lang, got, want, exprs):
    """The differences between the scanner's functions and the oracle's, as sentences."""
    if isinstance(got, dict) or isinstance(want, dict):
        return [f"scanner: {got}, oracle: {want}"]
    if shape(got) != shape(want):
        return [f"scanner: {shape(got)}\n oracle: {shape(want)}"]
    problems = []
    for f, g in zip(want, got):
        for p, q in zip(f["params"], g["params"]):
            where = f"{f['name']}({p['name']})"
            if p["default"] is not None:
                mine = exprs[q["default"]]
                theirs = ast.dump(p["default"]) if lang == "python" else p["default"]
                if mine != theirs:
                    problems.append(f"{where}: the default {q['default']!r} reads as {mine}\n  the oracle's: {theirs}")
            if lang == "python" and (p["annotation"] is None) != (q["annotation"] is None):
                problems.append(f"{where}: annotation {q['annotation']!r}, the oracle's {p['annotation']}")
            elif lang == "python" and p["annotation"] is not None:
                if python_expr(q["annotation"]) != ast.dump(p["annotation"]):
                    problems.append(f"{where}: the annotation {q['annotation']!r} is not the oracle's "
                                    f"{ast.unparse(p['annotation'])!r}")
            if lang == "javascript" and p["keys"] != q["keys"]:
                problems.append(f"{where}: keys {q['keys']}, the oracle's {p['keys']}")
    return problems


def params(lang, label):
    gap = KNOWN_GAPS.get((lang, label))
    marks = [pytest.mark.xfail(strict=True, reason=f"known gap: {gap}")] if gap else []
    return pytest.param(lang, label, marks=marks, id=f"{lang}: {label}")


@pytest.mark.parametrize("lang, label", [params(lang, label) for lang, label, _ in CASES])
def test_scanner_matches_the_language_parser(scanned, lang, label):
    wants, exprs = oracle(lang, scanned)
    assert wants[label] != [], "the oracle finds no function here: the case proves nothing"
    problems = compare(lang, scanned[(lang, label)], wants[label], exprs)
    assert not problems, "\n".join(problems)


# ---- `fnbox infer` against the oracle ----

def expected_schema(f):
    props = [p for p in f["params"] if p["kind"] not in ("var_positional", "var_keyword")]
    return {"properties": [p["name"] for p in props],
            "required": [p["name"] for p in props if p["default"] is None],
            "additionalProperties": any(p["kind"] == "var_keyword" for p in f["params"]),
            "variadic": any(p["kind"] == "var_positional" for p in f["params"]),
            "keys": {p["name"]: p["keys"] for p in props if p.get("keys") is not None}}


def reported_schema(out):
    s = out["parameters"]
    return {"properties": list(s["properties"]), "required": s["required"],
            "additionalProperties": s.get("additionalProperties") is True,
            "variadic": VARIADIC_NOTE in out["description"],
            "keys": {k: list(v["properties"]) for k, v in s["properties"].items()
                     if k.startswith("$") and "properties" in v}}


def infer(lang, code, name):
    proc = run_cli(["infer", "-"], input=json.dumps({"language": lang, "code": code, "functionName": name}))
    out, _ = parse_one_result(proc.stdout)
    return proc.returncode, out


@pytest.mark.parametrize("lang", list(CORPUS))
def test_fnbox_infer_matches_the_language_parser(scanned, lang):
    """Every function of the language's corpus through `fnbox infer` (functionName: the last definition of a
    name is the one a call runs, for fnbox as for the language)."""
    wants, _ = oracle(lang, scanned)
    jobs = []
    for case_lang, label, code in CASES:
        want = wants.get(label) if case_lang == lang else None
        if want is None or isinstance(want, dict) or KNOWN_GAPS.get((lang, label)):
            continue
        last = {f["name"]: f for f in want}
        jobs += [(label, code, f) for f in last.values()]
    assert jobs

    def check(job):
        label, code, f = job
        rc, out = infer(lang, code, f["name"])
        if rc != 0:
            return f"{label}: {f['name']}: exit {rc}: {out}"
        got, want = reported_schema(out), expected_schema(f)
        return None if got == want else f"{label}: {f['name']}:\n  infer:  {got}\n  oracle: {want}"
    with ThreadPoolExecutor(max_workers=4) as pool:
        problems = [p for p in pool.map(check, jobs) if p]
    assert not problems, "\n".join(problems)


def test_the_corpus_is_large_enough():
    """A few dozen real-world headers per language, each found by the oracle (an empty case proves nothing)."""
    for lang, entries in CORPUS.items():
        assert len(entries) >= 30, (lang, len(entries))
