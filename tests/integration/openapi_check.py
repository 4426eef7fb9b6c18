"""Checks an answer of `fnbox serve` against docs/openapi.yaml: the route (path template and method) is found,
the status is one the operation documents, the Content-Type is one that status documents, and a JSON body
(each line of an NDJSON body) is valid against its schema (JSON Schema 2020-12, python3-jsonschema); and a
JSON request the server took is valid against the operation's request schema.

servelib.Server.request calls check() on every answer, so every HTTP integration test checks the contract
as a side effect. The document is loaded and each validator built once per test process (the cache below).
FNBOX_OPENAPI_CHECK=0 turns the checks off (to measure what they cost)."""
import json
import os
import re
import sys
import time
import urllib.parse

import yaml
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

SPEC_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "openapi.yaml")
ENABLED = os.environ.get("FNBOX_OPENAPI_CHECK", "1") != "0"
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")

stats = {"answers": 0, "seconds": 0.0}  # what the checks cost in this process (conftest prints it)


class Mismatch(AssertionError):
    pass


def _escape(token):
    return token.replace("~", "~0").replace("/", "~1")


class Contract:
    def __init__(self, path=SPEC_PATH):
        with open(path, encoding="utf-8") as f:
            self.spec = yaml.safe_load(f)
        self.routes = []  # (regex, template, path item), the literal paths first
        for template, item in self.spec["paths"].items():
            regex = "^" + re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(template)) + "$"
            self.routes.append((re.compile(regex), template, item))
        self.routes.sort(key=lambda r: "{" in r[1])
        self.validators = {}

    def resolve(self, obj, pointer):
        """An OpenAPI object that may be a $ref to one in this document, with the JSON pointer where it is."""
        while isinstance(obj, dict) and "$ref" in obj:
            pointer = obj["$ref"][1:]
            obj = self.spec
            for part in pointer.split("/")[1:]:
                obj = obj[part.replace("~1", "/").replace("~0", "~")]
        return obj, pointer

    def validator(self, pointer):
        """A validator of the schema at pointer, its $refs resolved in this document (built once)."""
        v = self.validators.get(pointer)
        if v is None:
            root = dict(self.spec)  # the whole document as the root resource, so '#/components/...' resolves
            root["$ref"] = "#" + pointer
            root["$schema"] = "https://json-schema.org/draft/2020-12/schema"
            v = self.validators[pointer] = Draft202012Validator(root)
        return v

    def operation(self, method, path):
        """(template, responses, pointer of the responses) for method and path, or the answers any request of
        that kind may get before its route (an unknown path, a method the path does not take)."""
        before = self.spec.get("x-fnbox-before-route", {})
        for regex, template, item in self.routes:
            if regex.match(path):
                op = item.get(method.lower())
                if op is None:
                    return f"{path} (a method it does not take)", before.get("unmatched-method", {}), \
                        "/x-fnbox-before-route/unmatched-method"
                return template, op["responses"], f"/paths/{_escape(template)}/{method.lower()}/responses"
        return f"{path} (no such route)", before.get("unmatched-path", {}), "/x-fnbox-before-route/unmatched-path"

    def check(self, method, target, status, headers, body, request=None):
        path = urllib.parse.urlsplit(target).path
        template, responses, pointer = self.operation(method, path)
        where = f"{method} {template} answered {status}"
        self.check_request(method, template, status, body, request)
        key = str(status)
        if key not in responses:
            anyone = self.spec.get("x-fnbox-before-route", {}).get("any", {})
            if key not in anyone:
                raise Mismatch(f"OpenAPI: {where}, a status docs/openapi.yaml does not document there "
                               f"(documented: {', '.join(sorted(responses)) or 'none'}); body: {body[:300]!r}")
            responses, pointer = anyone, "/x-fnbox-before-route/any"
        response, rpointer = self.resolve(responses[key], f"{pointer}/{key}")
        content = response.get("content")
        if method == "HEAD" or (not body and not content):
            return
        if not content:
            raise Mismatch(f"OpenAPI: {where} with a body, but the document gives that answer none: {body[:300]!r}")
        ctype = (headers.get("content-type") or "").split(";")[0].strip().lower()
        media = self.media_type(content, ctype)
        if media is None:
            raise Mismatch(f"OpenAPI: {where} with Content-Type {ctype or '(none)'}, not one the document gives "
                           f"for it ({', '.join(content)})")
        if "schema" not in content[media]:
            return
        spointer = f"{rpointer}/content/{_escape(media)}/schema"
        if media != ctype:
            return  # a wildcard (`*/*`: a session file's bytes, whatever their type) is not parsed
        if ctype == "application/json":
            self.validate(where, spointer, self.parse(where, body))
        elif ctype == "application/x-ndjson":
            for n, line in enumerate(body.split(b"\n"), 1):
                if line.strip():
                    self.validate(f"{where}, NDJSON line {n}", spointer, self.parse(f"{where}, line {n}", line))

    def check_request(self, method, template, status, answer, request):
        """A JSON body the server took (a 2xx answer that is not an InvalidRequest result) is valid against the
        operation's request schema: the document does not refuse what the server accepts."""
        item = self.spec["paths"].get(template)
        op = item.get(method.lower()) if item else None
        media = ((op or {}).get("requestBody") or {}).get("content", {}).get("application/json")
        if not media or not request or not 200 <= status < 300 or b'"InvalidRequest"' in answer:
            return
        try:
            doc = loads(request)
        except ValueError:
            return
        pointer = f"/paths/{_escape(template)}/{method.lower()}/requestBody/content/application~1json/schema"
        self.validate(f"{method} {template} took a request (answered {status}) that", pointer, doc, what="request")

    @staticmethod
    def media_type(content, ctype):
        if ctype in content:
            return ctype
        major = ctype.split("/")[0]
        for candidate in (f"{major}/*", "*/*"):
            if candidate in content:
                return candidate
        return None

    @staticmethod
    def parse(where, raw):
        try:
            return loads(raw)
        except ValueError as e:
            raise Mismatch(f"OpenAPI: {where}: the body is not JSON ({e}): {raw[:300]!r}") from None

    def validate(self, where, pointer, doc, what="body"):
        error = best_match(self.validator(pointer).iter_errors(doc))
        if error is not None:
            at = "/".join(str(p) for p in error.absolute_path) or "(the document)"
            raise Mismatch(f"OpenAPI: {where}: the {what} does not match #{pointer}: at {at}: {error.message}\n"
                           f"{what}: {json.dumps(doc)[:600]}")


def loads(raw):
    try:
        return json.loads(raw)
    except RecursionError:  # nested deeper than Python's default limit (fnbox takes up to 2048 levels)
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 10000))
        try:
            return json.loads(raw)
        finally:
            sys.setrecursionlimit(limit)


_contract = None


def contract():
    global _contract
    if _contract is None:
        _contract = Contract()
    return _contract


def check(method, target, status, headers, body, request=None):
    """Raises Mismatch when the answer does not match the document, or the document refuses a request the
    server took. headers: the answer's, {lowercased name: value}; request: the request's body."""
    if not ENABLED:
        return
    t0 = time.thread_time()  # this thread's CPU: the load tests check from 16 threads at once
    try:
        contract().check(method.upper(), target, status, headers, body, request)
    finally:
        stats["answers"] += 1
        stats["seconds"] += time.thread_time() - t0
