"""docs/openapi.yaml, the HTTP API's contract: it is a valid OpenAPI 3.1 document (the official schema, through
@seriousme/openapi-schema-validator pinned in tests/integration/openapi/, and every Schema Object against JSON
Schema 2020-12), it names exactly the routes of the server's route table, `fnbox serve` serves it at
GET /v1/openapi.json, and the answers' checker (openapi_check.py, run on every answer of servelib's
Server.request) refuses answers that do not match it. Each check is also run on a broken copy, to show that it
can fail."""
import copy
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

import openapi_check
from fnboxlib import skip_unless_ci
from servelib import TOKEN, Server, Response

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "docs" / "openapi.yaml"
LINT_DIR = Path(__file__).resolve().parent / "openapi"
VALIDATOR = LINT_DIR / "node_modules" / "@seriousme" / "openapi-schema-validator" / "bin" / "validate-api-cli.js"


def load():
    with open(SPEC, encoding="utf-8") as f:
        return yaml.safe_load(f)


# ---- (a) the document is valid OpenAPI 3.1 ----

def lint(path):
    """The official OpenAPI schema's verdict on the document at path: (valid, the validator's report)."""
    if not shutil.which("node"):
        skip_unless_ci("node is not on PATH (the OpenAPI validator runs on it)")
    if not VALIDATOR.exists():
        skip_unless_ci(f"the OpenAPI validator is not installed under {LINT_DIR} (scripts/install-deps.sh)")
    p = subprocess.run(["node", str(VALIDATOR), str(path)], capture_output=True, text=True, timeout=60)
    report = json.loads(p.stdout)
    return report["valid"] and p.returncode == 0, report


def test_document_is_valid_openapi_3_1():
    doc = load()
    assert doc["openapi"].startswith("3.1."), doc["openapi"]
    valid, report = lint(SPEC)
    assert valid, json.dumps(report, indent=1)[:4000]


@pytest.mark.parametrize("breakage", ["response without description", "$ref to nothing", "unknown field",
                                      "parameter without in"])
def test_a_broken_document_is_refused(tmp_path, breakage):
    doc = load()
    if breakage == "response without description":
        del doc["paths"]["/v1/health"]["get"]["responses"]["200"]["description"]
    elif breakage == "$ref to nothing":
        doc["paths"]["/v1/call"]["post"]["responses"]["200"]["content"]["application/json"]["schema"] = {
            "$ref": "#/components/schemas/NoSuchSchema"}
    elif breakage == "unknown field":
        doc["paths"]["/v1/call"]["post"]["responsez"] = {}
    else:
        del doc["components"]["parameters"]["SessionId"]["in"]
    broken = tmp_path / "openapi.yaml"
    broken.write_text(yaml.safe_dump(doc, sort_keys=False))
    valid, report = lint(broken)
    assert not valid, f"the validator took a document with a {breakage}: {report}"


def schemas(node, where="#"):
    """Every Schema Object of the document, with where it is: the components' and those inline under
    content, parameters and headers."""
    if isinstance(node, dict):
        for key, value in node.items():
            here = f"{where}/{key}"
            if key == "schema" and isinstance(value, dict):
                yield here, value
            elif key == "schemas" and where == "#/components":
                for name, s in value.items():
                    yield f"{here}/{name}", s
            else:
                yield from schemas(value, here)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from schemas(value, f"{where}/{i}")


def check_schemas(doc):
    """The official OpenAPI schema takes any object as a Schema Object: each is checked against JSON
    Schema 2020-12's meta-schema here (the dialect OpenAPI 3.1 uses by default)."""
    found = list(schemas(doc))
    assert len(found) > 40, found
    for where, s in found:
        try:
            Draft202012Validator.check_schema(s)
        except SchemaError as e:
            raise AssertionError(f"{where}: not a valid JSON Schema 2020-12: {e.message}") from None


def test_every_schema_is_valid_json_schema_2020_12():
    check_schemas(load())


def test_a_broken_schema_is_refused():
    doc = load()
    doc["components"]["schemas"]["SessionInfo"]["properties"]["running"]["type"] = "intger"
    with pytest.raises(AssertionError, match="SessionInfo"):
        check_schemas(doc)


def router_routes():
    """(METHOD, path) of every line of the server's route table (src/server/http/router.c)."""
    text = (ROOT / "src" / "server" / "http" / "router.c").read_text()
    table = text.split("k_routes[] = {", 1)[1].split("};", 1)[0]
    return {(m, p) for m, p in re.findall(r'\{"([A-Z]+)", "([^"]+)"', table)}


def test_the_document_names_exactly_the_routes_of_the_route_table():
    routes = router_routes()
    assert ("POST", "/v1/call") in routes and len(routes) > 25, routes
    documented = {(m.upper(), p) for p, item in load()["paths"].items() for m in item if m in openapi_check.METHODS}
    assert routes - documented == set(), f"routes the document lacks: {sorted(routes - documented)}"
    assert documented - routes == set(), f"documented but not routed: {sorted(documented - routes)}"


# ---- (c) the server serves it ----

def test_served_document_equals_the_yaml():
    """GET /v1/openapi.json needs no token, as /v1/health (both are public: see the document's own words)."""
    with Server("--token-file", token_file()) as srv:
        r = srv.request("GET", "/v1/openapi.json")
        assert r.status == 200, r
        assert r.header("Content-Type") == "application/json", r.headers
        assert r.json() == load()
        head = srv.request("HEAD", "/v1/openapi.json")
        assert head.status == 200 and head.body == b"", head
        assert int(head.header("Content-Length")) == len(r.body), head.headers
        # a public path is public with every method, as /v1/health is: another method is 405, token or not
        assert srv.request("POST", "/v1/openapi.json", body={}).status == 405
        assert srv.request("POST", "/v1/health", body={}).status == 405
        assert srv.request("GET", "/metrics").status == 401  # the others still need one


def test_the_document_says_which_routes_need_no_token():
    doc = load()
    public = {p for p, item in doc["paths"].items() if item.get("get", {}).get("security") == []}
    assert public == {"/v1/health", "/v1/openapi.json"}, public
    assert doc["security"] == [{"bearer": []}]
    assert doc["components"]["securitySchemes"]["bearer"] == {**doc["components"]["securitySchemes"]["bearer"],
                                                               "type": "http", "scheme": "bearer"}


def token_file():
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"fnbox-openapi-tokens.{os.getpid()}")
    with open(path, "w") as f:
        f.write(TOKEN + "\n")
    os.chmod(path, 0o600)
    return path


# ---- (b) the answers' checker refuses what does not match ----

def broken_contract(tmp_path, edit):
    doc = load()
    edit(doc)
    path = tmp_path / "openapi.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return openapi_check.Contract(str(path))


def answer(srv, method, path, body=None, **kw):
    """An answer fetched past servelib's own check (so that a broken contract can be tried on it)."""
    c = srv.connection()
    try:
        h = dict(kw.get("headers") or {})
        if isinstance(body, dict):
            body = json.dumps(body).encode()
            h["Content-Type"] = "application/json"
        c.request(method, path, body=body, headers=h)
        r = c.getresponse()
        resp = Response(r.status, r.getheaders(), r.read())
    finally:
        c.close()
    return resp


def check(contract, method, path, resp, request=None):
    contract.check(method, path, resp.status, {k.lower(): v for k, v in resp.headers}, resp.body, request)


def test_the_checker_refuses_answers_that_do_not_match(tmp_path):
    request = {"language": "python", "code": "def f():\n    return 1\n", "limits": {"memoryBytes": 2 ** 27}}
    with Server() as srv:
        health = answer(srv, "GET", "/v1/health")
        call = answer(srv, "POST", "/v1/call", request)
        streamed = answer(srv, "POST", "/v1/call", {"language": "python", "code": "def f():\n    print(1)\n"},
                          headers={"Accept": "application/x-ndjson"})
        missing = answer(srv, "GET", "/v1/nothing")
        wrong = answer(srv, "PATCH", "/v1/call")
    real = openapi_check.Contract()
    for method, path, resp in [("GET", "/v1/health", health), ("POST", "/v1/call", call),
                               ("POST", "/v1/call", streamed), ("GET", "/v1/nothing", missing),
                               ("PATCH", "/v1/call", wrong)]:
        check(real, method, path, resp)  # the real document takes them all
    check(real, "POST", "/v1/call", call, json.dumps(request).encode())

    def memory_limits_refused(doc):
        doc["components"]["schemas"]["Limits"]["properties"]["memoryBytes"]["maximum"] = 2 ** 20
    with pytest.raises(openapi_check.Mismatch, match="POST /v1/call took a request .* at limits/memoryBytes"):
        check(broken_contract(tmp_path, memory_limits_refused), "POST", "/v1/call", call, json.dumps(request).encode())

    def version_is_a_number(doc):
        doc["components"]["schemas"]["Health"]["properties"]["version"] = {"type": "number"}
    with pytest.raises(openapi_check.Mismatch, match=r"GET /v1/health answered 200.*at version: .* is not of type"):
        check(broken_contract(tmp_path, version_is_a_number), "GET", "/v1/health", health)

    def no_200(doc):
        del doc["paths"]["/v1/call"]["post"]["responses"]["200"]
    with pytest.raises(openapi_check.Mismatch, match="POST /v1/call answered 200, a status .* does not document"):
        check(broken_contract(tmp_path, no_200), "POST", "/v1/call", call)

    def stdout_lines_are_numbers(doc):
        doc["components"]["schemas"]["StreamLine"]["allOf"][0]["then"]["properties"]["data"] = {"type": "number"}
    with pytest.raises(openapi_check.Mismatch, match="NDJSON line 1"):
        check(broken_contract(tmp_path, stdout_lines_are_numbers), "POST", "/v1/call", streamed)

    def no_ndjson(doc):
        del doc["paths"]["/v1/call"]["post"]["responses"]["200"]["content"]["application/x-ndjson"]
    with pytest.raises(openapi_check.Mismatch, match="Content-Type application/x-ndjson"):
        check(broken_contract(tmp_path, no_ndjson), "POST", "/v1/call", streamed)

    def error_needs_more(doc):
        doc["components"]["schemas"]["Error"]["properties"]["error"]["required"].append("field")
    for method, path, resp in [("GET", "/v1/nothing", missing), ("PATCH", "/v1/call", wrong)]:
        with pytest.raises(openapi_check.Mismatch, match=f"{method} {path} .* answered {resp.status}.*'field'"):
            check(broken_contract(tmp_path, error_needs_more), method, path, resp)


def test_server_request_fails_the_test_on_a_mismatch(tmp_path, monkeypatch):
    """The hook itself: servelib.Server.request turns a mismatch into the test's failure."""
    def no_health(doc):
        del doc["paths"]["/v1/health"]["get"]["responses"]["200"]
    monkeypatch.setattr(openapi_check, "_contract", broken_contract(tmp_path, no_health))
    monkeypatch.setattr(openapi_check, "ENABLED", True)
    with Server() as srv:
        with pytest.raises(pytest.fail.Exception, match="GET /v1/health answered 200"):
            srv.request("GET", "/v1/health")
        monkeypatch.setattr(openapi_check, "_contract", None)  # the real document again, for the stop
