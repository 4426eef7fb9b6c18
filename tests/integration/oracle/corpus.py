"""The corpus of tests/integration/test_infer_oracle.py: real-world function headers per language, each a small
source of its own (label, code), as people write them: library signatures, framework handlers, defaults with
nested brackets, strings and lambdas, every parameter kind, comments and odd spacing inside parameter lists,
and the classes, nested functions and strings around them that must not be taken for top-level functions.
Every source is valid code for the language's own parser (the oracle)."""

PYTHON = [
    ("requests.request", '''
def request(method, url, params=None, data=None, headers=None, cookies=None, files=None, auth=None,
            timeout=None, allow_redirects=True, proxies=None, hooks=None, stream=None, verify=None, cert=None,
            json=None):
    """Constructs and sends a Request."""
'''),
    ("nested brackets and strings in defaults", '''
def render(sep=", ", pairs=[("a", 1), ("b", {"c": [2, 3]})], pat=r"\\(,\\)", fmt='%(a)s, %(b)s', empty=()):
    pass
'''),
    ("lambdas in defaults", '''
def sort_by(items, key=lambda x: (x[0], -x[1]), reverse=False, cmp=lambda a, b=2: (a > b) - (a < b)):
    return sorted(items, key=key, reverse=reverse)
'''),
    ("*args and **kwargs", '''
def log(msg, *args, level="INFO", exc_info=False, **kwargs):
    print(msg % args)
'''),
    ("keyword-only with annotations", '''
def connect(host: str, port: int = 5432, *, user: str, password: "str | None" = None, ssl: bool = False,
            timeout: float = 10.0) -> "Connection":
    ...
'''),
    ("positional-only", '''
def divmod_(a, b, /, c=1, *, d):
    return a, b, c, d

def only(x, /):
    return x

def pos_defaults(a=1, b=2, /, c=3):
    return a + b + c
'''),
    ("typing annotations", '''
from typing import Callable, Dict, List, Optional

def fetch(url: str, headers: Dict[str, List[str]] = {}, cb: Optional[Callable[[int, str], None]] = None,
          retries: "int" = 3, backoff: float = .5) -> Optional[bytes]:
    ...
'''),
    ("decorators with arguments", '''
@app.route("/items/<int:pk>", methods=["GET", "POST"])
@login_required
@cache(timeout=60 * 5, key=lambda req: (req.path, req.user.id))
def view(request, pk: int, *, fmt="json"):
    return fmt
'''),
    ("async def", '''
import aiohttp

async def handler(request, *args, session: "aiohttp.ClientSession" = None, **kw):
    async with session.get(request.url) as r:
        return await r.text()
'''),
    ("comments inside the parameter list", '''
def train(
    model,            # the network
    data,             # (x, y) pairs, "comma, inside"
    epochs=10,        # how many passes (default 10)
    lr=1e-3,
    callbacks=(),     # a tuple: (a, b)
):
    pass
'''),
    ("comprehensions in defaults", '''
def f(x={k: v for k, v in zip("ab", (1, 2))}, y=[i for i in range(3) if i % 2], z=(n for n in ()), s={1, 2}):
    return x, y, z, s
'''),
    ("unicode names", '''
def grüße(名前, ñ=1, *αβ, **κ):
    return f"Hallo {名前}"
'''),
    ("string defaults with quotes and escapes", r'''
def quote(a='it\'s', b="say \"hi\", (ok)", c="""multi
line, (still)""", d=b'\x00,', e=f"{1 + 1}, {'x'}", g=rb'\d+'):
    return a
'''),
    ("a class before the function", '''
class Repository:
    def __init__(self, path, *, bare=False):
        self.path = path

    def commit(self, message, author=None, **trailers):
        pass

    @staticmethod
    def open(path): pass

def clone(url, to_path, progress=None, env=None, multi_options=None, **kwargs):
    pass
'''),
    ("nested function", '''
def outer(a, b=2):
    def inner(c, d=4):
        return c + d
    return inner(a, b)
'''),
    ("defs that are not top-level", '''
import sys
if sys.version_info >= (3, 8):
    def compat(a, b):
        return a
else:
    def compat(a):
        return a
try:
    from ujson import loads
except ImportError:
    def loads(s, *, cls=None):
        pass

def top(level=1):
    return level
'''),
    ("backslash continuation", '''
def f(a, \\
      b=1, \\
      *rest):
    return a
'''),
    ("slices, lambdas with defaults, dict in annotation", '''
def window(seq, key=lambda x, y=1: x[1:2], slc=slice(1, None), cfg: {"a": 1} = {"b": [1, 2]}):
    return seq[slc]
'''),
    ("operators in defaults", '''
def flags(a=1 if True else 2, b=not False, c=-1, d=~0, e=1 < 2, f=2 ** 10, g=3 // 2, h=(yield_ := 1) if 0 else 2):
    return a
'''),
    ("empty and spaced lists", '''
def none():
    pass

def spaced( ):
    pass

def  tabs(\ta,\tb = 2 ):
    pass
'''),
    ("only stars", '''
def star_args(*args):
    pass

def star_kwargs(**kwargs):
    pass

def kw_only(*, a, b=1):
    pass

def both(*a, **k):
    pass
'''),
    ("trailing commas", '''
def f(a, b,):
    pass

def g(*, a, **k,):
    pass
'''),
    ("module docstring mentioning def", '''
"""Helpers.

def fake(x, y):  -- not a function, only text
"""

def real(a, b=")"):
    """def also_fake(z):"""
    return a
'''),
    ("decorator text that looks like a def", '''
@register(lambda: "def x(", name="def y(a, b)")
def handler(event, context=None):
    return event
'''),
    ("async fixture", '''
import pytest

@pytest.fixture(scope="module", params=[("a", 1), ("b", 2)], ids=lambda p: p[0])
async def client(aiohttp_client, loop, *, app=None):
    return await aiohttp_client(app)
'''),
    ("attribute and call defaults", '''
import os, sys

def open_file(path, enc=sys.getdefaultencoding(), mode=os.O_RDONLY | os.O_CLOEXEC, opener=os.open):
    return opener(path, mode)
'''),
    ("overloads", '''
from typing import overload

@overload
def parse(x: int) -> int: ...
@overload
def parse(x: str, *, strict: bool = ...) -> str: ...
def parse(x, *, strict=True):
    return x
'''),
    ("one-line defs and semicolons", '''
def add(x, y=2): return x + y
def sub(x, y): z = x - y; return z
x = 1; y = 2
'''),
    ("CRLF line endings", "def f(a,\r\n      b=1):\r\n    return a\r\n\r\ndef g(c):\r\n    return c\r\n"),
    ("main guard", '''
def main(argv=None):
    return 0

if __name__ == "__main__":
    raise SystemExit(main())
'''),
    ("parentheses inside annotation strings", '''
def f(a: "Tuple[int, (str)]" = ("(", ")"), b: 'Dict[str, "x,y"]' = None) -> "List[(int)]":
    return a
'''),
    ("soft keywords as names", '''
def f(match, case=None, type=None, print=print, _=None):
    return match
'''),
    ("annotated *args and **kwargs", '''
from typing import Any

def call(func, *args: Any, sep: str = " ", end="\\n", **kwargs: Any) -> None:
    func(*args, **kwargs)
'''),
    ("number literals", '''
def nums(a=0x1F, b=1_000, c=1e-3j, d=..., e=None, f=0o17, g=0b1010, h=1., i=.5):
    return a
'''),
    ("multi-line dict default with comments", '''
def configure(options={
    "debug": False,   # no, really: False
    "paths": ["/a", "/b"],  # two, of them
    "nested": {"x": (1, 2)},
}, *, strict=True):
    return options
'''),
    ("def text inside a function's string", '''
def template(a):
    s = """
def fake(x):
    pass
"""
    return s

def after(b, c=[]):
    return b
'''),
    ("class with a nested class and decorators", '''
@dataclass(frozen=True)
class Point:
    x: int = 0
    y: int = 0

    class Meta:
        def m(self, a): pass

def distance(p: Point, q: Point = Point(), *, metric="euclid") -> float:
    return 0.0
'''),
    ("default calling a function with keywords", '''
def build(parser=argparse.ArgumentParser(prog="x", description="a, b (c)", epilog=f"{1}"), verbose=False):
    return parser
'''),
    ("hash inside strings and lambdas with stars", '''
def f(a="#not a comment", cb=lambda *a, **k: (a, k), g=lambda x=lambda: 0, y=1: x, h=lambda: 1 if a else 2):
    return a
'''),
    ("spacing around the name", '''
def\tspaced (a, b = 1):
    pass

def tight(a):pass
'''),
    ("comments between decorators and def", '''
@decorator  # applies (twice)
# a comment line
@other(x=")")
def decorated(a, /, b, *, c=3):  # trailing (comment
    pass
'''),
    ("annotations with equals signs and lambdas", '''
def f(a: "x=1" = 2, cb: Callable = lambda: None, d: dict = {"=": "=="}) -> "a=b":
    return a
'''),
    ("f-strings with nested quotes", '''
def f(width=10, fmt=f"{'x'!r:>{10}}", g=f'{"(": ")"}'):
    return fmt
'''),
    ("comment right after a comma", '''
def f(a=1,# first
      b=2,  # second, (really)
      *, c):
    pass
'''),
    ("unpacking and calls in defaults", '''
def f(a=(lambda: 1)(), b=[*range(3)], c={**{"k": 1}}, d=(*"ab",), e=print("x", end="")):
    return a
'''),
    ("string prefixes", '''
def f(a=Rb'x,)', b=BR"y(", c=u'z,', d=F"{1},)", e="""with \'\'\' inside, (x)"""):
    return a
'''),
    ("a continuation line starting with def_", '''
def_list = [1]
x = [0] + \\
def_list
def_like = [
def_ for def_ in ()]

def real(a, def_=1):
    return a
'''),
    ("keyword-only default before a required one", '''
def f(*, a=1, b, c=None):
    return a

def g(a, /, *args, b, **kw):
    return a
'''),
    ("variadic generics annotation", '''
from typing import TypeVarTuple
Ts = TypeVarTuple("Ts")

def call_with(*args: *Ts, key: str = "k") -> tuple[*Ts]:
    return args
'''),
]

JAVASCRIPT = [
    ("defaults and a destructured options object", '''
function greet(name, greeting = "Hello, world", {loud = false, lang} = {}) {
  return `${greeting}, ${name}`;
}
'''),
    ("arrow functions", '''
const add = (a, b = 1) => a + b;
const inc = x => x + 1;
let noop = () => {};
var twice = (f) => (x) => f(f(x));
'''),
    ("async arrow with destructured options", '''
export const fetchJson = async (url, { headers = {}, timeout = 5000, retries: tries = 3 } = {}) => {
  const res = await fetch(url, { headers });
  return res.json();
};
'''),
    ("generators", '''
function* range(start, end = Infinity, step = 1) {
  for (let i = start; i < end; i += step) yield i;
}

async function* stream(source, ...transforms) {
  for await (const chunk of source) yield chunk;
}
'''),
    ("rest parameters", '''
function log(level, ...args) {
  console.log(level, ...args);
}
'''),
    ("array destructuring", '''
function distance([x1, y1], [x2, y2] = [0, 0]) {
  return Math.hypot(x2 - x1, y2 - y1);
}
'''),
    ("nested object patterns", '''
function configure({a: {b, c = [1, 2]}, "d-e": de, 3: three, ...rest}, [first, , third] = []) {
  return rest;
}
'''),
    ("functions and objects in defaults", '''
function read(path, cb = (err, data) => { if (err) throw err; return data; }, opts = {a: [1, {b: 2}], c: "x,y"}) {
  return cb(null, path);
}
'''),
    ("template literals and regexes in defaults", '''
function fmt(s = `a ${b + `nested ${c}`} ,)`, re = /,\\)/g, div = 10 / 2 / 1) {
  return s.replace(re, "");
}
'''),
    ("comments inside the parameter list", '''
function request(url /* string, required */, method = "GET" // the verb, e.g. "POST"
    , body /* object, optional */) {
  return fetch(url, { method, body });
}
'''),
    ("a class before the function", '''
class Queue {
  constructor(capacity, { fair = true } = {}) { this.items = []; }
  push(item, priority = 0) { this.items.push(item); }
  static from(iterable) { return new Queue(); }
  get size() { return this.items.length; }
  async drain(fn = async (x) => x) {}
  *[Symbol.iterator]() { yield* this.items; }
}

function drain(queue, handler) {
  return queue.drain(handler);
}
'''),
    ("object literal methods", '''
const api = {
  get(url, opts) {},
  post: function (url, body) {},
  del: (url) => {},
};
function real(d) {
  return api;
}
'''),
    ("named function expressions", '''
var handler = function namedInner(event, context) {
  return namedInner;
};
let asyncHandler = async function (req, res, next) {};
'''),
    ("export default function", '''
export default function main(argv = process.argv.slice(2), { env = process.env } = {}) {
  return argv;
}
'''),
    ("unicode and $ names", '''
function grüße(名前, ñ = 1, $el, _private) {
  return 名前;
}
'''),
    ("new and calls in defaults", '''
function schedule(start = new Date(2020, 0, 1), cache = new Map([[1, 2], [3, 4]]), id = uuid()) {
  return start;
}
'''),
    ("ternaries and the comma operator", '''
function pick(a = b ? c : d, e = (1, 2), f = (a || b && c) ?? d) {
  return a;
}
'''),
    ("trailing commas", '''
function f(a, b,) {}
const g = (c, d = 1,) => c;
'''),
    ("multi-line with JSDoc", '''
/**
 * Creates a user.
 * @param {string} name the name, e.g. "Ada"
 */
async function createUser(
  name,
  options = {
    admin: false,
    groups: ["a", "b"],
  },
) {
  return { name, options };
}
'''),
    ("nested functions", '''
function outer(a) {
  function inner(b, c = 2) {
    return b + c;
  }
  const arrow = (d) => d;
  return inner(a);
}
'''),
    ("function text inside strings", '''
const s = "function fake(a) {}";
const t = 'const alsoFake = (b) => b';
const u = `function templated(c) {}`;
function real(d) {
  return s + t + u;
}
'''),
    ("several declarators", '''
const first = (x) => x, second = function (y, z) { return y; };
'''),
    ("IIFE", '''
(function (w, d) {
  w.x = d;
})(globalThis, {});
function real() {
  return 1;
}
'''),
    ("arrows with patterns and object bodies", '''
const byId = ({id, name}) => id;
const merge = (a = {}, ...others) => ({...a, ...Object.assign({}, ...others)});
const pair = ([k, v]) => ({[k]: v});
'''),
    ("defaults using earlier parameters", '''
function scale(a, b = a * 2, c = b + a, d = function (x, y) { return x, y; }) {
  return d(a, c);
}
'''),
    ("contextual keywords as names", '''
function get(key, fallback = null) {}
function set(key, value) {}
function of(async, from, as) {}
const wait = async => async;
'''),
    ("hashbang", '''#!/usr/bin/env node
function main(argv) {
  return argv.length;
}
'''),
    ("number literals", '''
function limits(n = 1_000n, m = 0x10, o = .5e-3, p = 0b1010, q = 0o17, r = -1) {
  return n;
}
'''),
    ("rest patterns", '''
function f({a = 1, ...others} = {}, ...[x, y]) {
  return x;
}
'''),
    ("class expression and exports", '''
const Klass = class {
  method(a) {}
};
export async function exported(a, b = "export function fake(c) {}") {}
export { Klass };
'''),
    ("division and regex after parentheses", '''
const ratio = (a, b = (10) / 2 / (1)) => a / b;
function strip(text, re = /[(,)]/g, flags = "g") {
  return text.replace(re, "");
}
'''),
    ("label-like and shorthand defaults", '''
function options(a = { b: { c: 1 } }, d = [[], {}], e = { f() { return 1; }, g: (h, i) => h }) {}
'''),
    ("async function declaration", '''
async function handler(event, context = {}, callback = () => {}) {
  return { statusCode: 200 };
}
'''),
    ("arrows with defaults in defaults", '''
function f(a = (b = 1, c = [2]) => b + c, d = class { m(x, y) {} }, e = { get v() { return 1; } }) {}
'''),
    ("comparisons in defaults", '''
function cmp(a = b < c, d = e > f, g = h >>> 2, i = j <= k) {}
'''),
    ("a function named async and async on its own line", '''
function async(a) {}
async
function notAsync(b) {}
'''),
    ("private class members and static blocks", '''
class Counter {
  #count = 0;
  static #instances = new Set();
  static { Counter.ready = true; }
  #bump(by = 1) { this.#count += by; }
}
function useCounter(c, by = 1) {}
'''),
    ("regex with slashes in a class and escaped quotes", '''
function paths(re = /[/\\\\]+/g, q = "\\")", s = '\\',') {}
'''),
    ("export default async function", '''
export default async function handler(req, res = {}, { log = console.log } = {}) {}
'''),
    ("nested templates and parenthesized regexes", '''
function f(a = `${`${x},)`}`, b = (/x,y/), c = [/]/, /,/]) {}
'''),
    ("object pattern defaults with commas", '''
function connect({host = "localhost", ports = [80, 443], opts = merge(a, b)} = {}, retry = 3) {}
'''),
    ("immediately invoked arrow and curried arrows", '''
const value = ((a) => a)(1);
const curried = (a) => (b) => a + b;
export const gen = async function* generate(limit = 10) {};
'''),
]

RUBY = [
    ("every parameter kind", '''
def initialize(name, age = 0, *tags, email:, admin: false, **opts, &block)
  @name = name
end
'''),
    ("without parentheses", '''
def greet name, greeting = "Hello, world"
  "#{greeting}, #{name}"
end
'''),
    ("endless methods", '''
def square(x) = x * x
def hello = "hi"
def self.call(env) = [200, {"content-type" => "text/plain"}, ["ok"]]
'''),
    ("def self.", '''
def self.create(attrs = {}, &blk)
  new(attrs).tap(&blk)
end
'''),
    ("nested brackets and strings in defaults", '''
def render(a = [1, [2, 3]], b = {x: "a, b", "y" => [4]}, c = "(,)", d = 'it\\'s')
  a
end
'''),
    ("lambdas in defaults", '''
def apply(cb = ->(x, y = 1) { x + y }, other = lambda { |a, b| a }, proc_ = proc { |c, d| c })
  cb.call(1)
end
'''),
    ("anonymous block", '''
def each_item(list, &)
  list.each(&)
end
'''),
    ("method_missing", '''
def method_missing(name, *args, **kwargs, &block)
  super
end

def respond_to_missing?(name, include_private = false)
  true
end
'''),
    ("bang and keyword names", '''
def save!(validate: true, touch: true)
  true
end

def valid?(context = nil)
  true
end
'''),
    ("required after the splat", '''
def surround(first, *middle, last)
  [first, middle, last]
end
'''),
    ("destructuring parameter", '''
def pair((key, value), index)
  [key, value, index]
end
'''),
    ("argument forwarding", '''
def delegate(...) = target.call(...)

def wrap(...)
  inner(...)
end
'''),
    ("no keywords accepted", '''
def strict(a, b = 1, **nil)
  a
end
'''),
    ("comments inside the parameter list", '''
def configure(
  host,            # the server, e.g. "db, primary"
  port = 5432,     # default port (5432)
  ssl: true,       # use TLS, or not
  **extra
)
  extra
end
'''),
    ("heredoc in the body", '''
def help_text(name)
  <<~TEXT
    def fake(x, y)
    end
    Usage: #{name}
  TEXT
end

def after(a, b = 2)
  a
end
'''),
    ("a class and a module before the def", '''
class Parser
  def initialize(io, strict: false)
    @io = io
  end

  def self.parse(text, **opts)
    new(text, **opts)
  end
end

module Util
  module_function

  def slug(s, sep = "-") = s
end

def parse(text, strict: false)
  Parser.parse(text, strict: strict)
end
'''),
    ("interpolation in a default", '''
def label(a = "#{prefix} end, (done)", b = "#{x ? "y, z" : 'w'}")
  a
end
'''),
    ("percent literals", '''
def choose(words = %w[a b c], re = %r{a,b}, syms = %i(x y), str = %q(x, (y)))
  words
end
'''),
    ("regexp default with a comma", '''
def split_on(text, pat = /a,b/, limit = -1)
  text.split(pat, limit)
end
'''),
    ("character literal default", '''
def join(parts, sep = ?,, quote = ?")
  parts.join(sep)
end
'''),
    ("symbol defaults", '''
def open_mode(mode = :read, key: :"a,b", other: :c)
  mode
end
'''),
    ("ternaries in defaults", '''
def pick(a = cond ? 1 : 2, k: x ? :y : :z)
  a
end
'''),
    ("unicode names", '''
def grüße(名前, ñ: 1)
  "Hallo #{名前}"
end
'''),
    ("keyword-only and anonymous rests", '''
def kw(a:, b: 2, **)
  a
end

def anon(*, **)
  nil
end

def splat(*)
  nil
end
'''),
    ("rescue in the body", '''
def safe(x, fallback = nil)
  Integer(x)
rescue ArgumentError => e
  fallback
ensure
  nil
end
'''),
    ("defaults using earlier parameters", '''
def scale(a, b = a + 1, c = b * 2, d = a.then { |x| x + 1 })
  [a, b, c, d]
end
'''),
    ("defs in blocks are not top-level", '''
begin
  def inside(a)
    a
  end
end

if defined?(Rails)
  def conditional(b)
    b
  end
end

def outside(c)
  c
end
'''),
    ("backslash continuation without parentheses", '''
def continued a, \\
              b = 1
  a
end
'''),
    ("hash defaults without parentheses", '''
def defaults a, b = {}, c = {x: 1}
  b
end
'''),
    ("one-line defs", '''
def one(a); a; end
def two(a, b = [1, 2]) a end
'''),
    ("multi-line default", '''
def connect(host, options = {
  timeout: 5,   # seconds, (default)
  retries: [1, 2],
})
  options
end
'''),
    ("end as a symbol and a label", '''
def range_of(start, finish: nil, stop: :end)
  { end: finish, start: start }
end

def later(x)
  x
end
'''),
    ("global, instance and constant defaults", '''
def write(msg, io = $stdout, level = @level, fmt = Logger::Formatter.new, root = ::File::SEPARATOR)
  io.puts(msg)
end
'''),
    ("heredoc default", '''
def banner(text = <<~EOS, width: 80)
  Hello, (world)
EOS
  text
end
'''),
    ("keyword names that are keywords", '''
def cond(if:, class: nil, end: 1)
  binding.local_variable_get(:if)
end

def after_keywords(a)
  a
end
'''),
    ("parenless with a call in a default", '''
def fetch url, opts = build(1, 2), &blk
  blk
end
'''),
    ("several defs on one line", '''
def one_liner(a); end; def another(b) = b
'''),
    ("setter-like and operator names", '''
def value=(v)
  @v = v
end

def <=>(other)
  0
end

def [](index, default = nil)
  default
end
'''),
    ("=begin docs and __END__", '''
=begin
def fake(a, b)
end
=end
def real(x, y = 1)
  x
end
__END__
def after_end(z)
end
'''),
    ("nested interpolation and blocks in defaults", '''
def f(a = "#{"nested #{"deep, (x)"}"}", b = [1, 2].sum { |x| x * 2 }, c = ->(x, y) do x end)
  a
end
'''),
    ("ranges, floats and operator symbols", '''
def f(a = (1..10), b = 1...5, c = 1.0e-3, d = :+, e = :"quoted, sym")
  a
end
'''),
    ("parenless keywords and predicate endless def", '''
def fetch_all url, limit: 10, &blk
  blk
end

def empty?(x = nil) = x.nil?
'''),
]

PHP = [
    ("typed handler", '''<?php
function handle(Request $request, ?User $user = null, array $options = [], int|string ...$ids): ?Response {
    return null;
}
'''),
    ("by reference", '''<?php
function swap(&$a, &$b): void {
    [$a, $b] = [$b, $a];
}

function &getRef(array &$arr, $key) {
    return $arr[$key];
}
'''),
    ("variadic by reference", '''<?php
function clear(&...$refs): void {
    foreach ($refs as &$r) { $r = null; }
}
'''),
    ("nullable, union and intersection types", '''<?php
function types(Countable&Traversable $c, ?int $a, int|float|null $b = null, \\DateTimeInterface|string $d = 'now') {}
'''),
    ("attributes", '''<?php
#[Route("/users/{id}", methods: ["GET", "POST"])]
#[Deprecated]
function view(#[SensitiveParameter] string $password, #[Inject(name: "a, b")] $service = null, int $id = 0) {}
'''),
    ("nested arrays and strings in defaults", '''<?php
function render($a = ['x' => [1, 2], 'y' => "a, b"], $b = "(,)", $c = 'it\\'s', $d = array(1, array(2, 3))) {}
'''),
    ("constant expressions", '''<?php
function encode($value, $flags = JSON_THROW_ON_ERROR | JSON_PRETTY_PRINT, $eol = PHP_EOL, $fmt = \\DateTime::ATOM,
                $depth = 512 * 2, $half = PHP_INT_MAX >> 1) {}
'''),
    ("new in initializers", '''<?php
function withLogger(string $channel, LoggerInterface $logger = new NullLogger(), array $ctx = ['a' => new ArrayObject([1, 2])]) {}
'''),
    ("promoted constructor parameters, then a function", '''<?php
final class Point {
    public function __construct(
        public readonly float $x = 0.0,
        protected ?int $y = null,
        private array $tags = [],
    ) {}

    public static function origin(): static { return new static(); }
}

function distance(Point $a, Point $b = new Point()): float {
    return 0.0;
}
'''),
    ("closures and arrow functions are not declarations", '''<?php
$f = function ($a, $b = 2) use ($c) { return $a; };
$g = fn($x, $y = [1, 2]) => $x;
function real($z = null) {
    return fn($w) => $w;
}
'''),
    ("conditional declaration", '''<?php
if (!function_exists('str_contains_any')) {
    function str_contains_any(string $haystack, array $needles, bool $ci = false): bool {
        return false;
    }
}
'''),
    ("braced namespace", '''<?php
namespace App\\Helpers {
    function slug(string $s, string $sep = '-'): string {
        return $s;
    }
}
'''),
    ("heredoc default", '''<?php
function greet($name, $tpl = <<<EOT
    Hello, (world), {name}
    EOT, $n = 1) {
    return $tpl;
}
'''),
    ("nowdoc in the body", '''<?php
function source(): string {
    return <<<'CODE'
    function fake($a, $b) {}
    CODE;
}

function after($x, $y = 2) {}
'''),
    ("comments inside the parameter list", '''<?php
function request(string $url /* required, really */, // the URL, e.g. "http://a, b"
                 string $method = 'GET', # the verb (GET)
                 ?array $body = null /** an array, or null */) {}
'''),
    ("no opening tag", '''
function add($a, $b = 2) {
    return $a + $b;
}
'''),
    ("inline HTML around PHP", '''<?php /* a template */ ?>
<html>
<?php function tpl($title, $items = []) { ?>
  <h1><?= $title ?></h1>
<?php } ?>
</html>
'''),
    ("keyword case", '''<?php
FUNCTION Upper($A, $B = NULL) {}
Function mixed_Case(Array $x = ARRAY()) {}
'''),
    ("unicode names", '''<?php
function grüße($名前, $ñ = 1) {
    return "Hallo $名前";
}
'''),
    ("interfaces, traits and enums before a function", '''<?php
interface Shape { public function area(float $scale = 1.0): float; }
trait Named { public function name(string $prefix = ''): string { return $prefix; } }
enum Suit: string {
    case Hearts = 'h';
    public function label(bool $short = false): string { return 'x'; }
}
function real($c, Suit $s = Suit::Hearts) {}
'''),
    ("anonymous class", '''<?php
$o = new class(1) {
    public function __construct(private int $x) {}
    public function m($a, $b = [1]) {}
};
function after_anon($b) {}
'''),
    ("parenthesized constant expressions", '''<?php
function calc($a = (1 + 2) * 3, $b = [1, 2][0], $c = ('x' . 'y'), $d = true ? 1 : 2) {}
'''),
    ("return by reference with a typed variadic", '''<?php
function &parts(string $glue = ', ', string ...$parts): array {
    static $cache = [];
    return $cache;
}
'''),
    ("optional before required", '''<?php
function legacy($a = 1, $b) {}
'''),
    ("implicit nullable defaults", '''<?php
function nullable(?array $a = null, string $b = null, int $c = -1) {}
'''),
    ("trailing comma", '''<?php
function trailing($a, $b,) {}
'''),
    ("a function declared inside a function", '''<?php
function outer($x) {
    function inner($y, $z = 2) {}
    return $x;
}
'''),
    ("strict types and use statements", '''<?php
declare(strict_types=1);

use Foo\\Bar as Baz;
use function Foo\\helper;

function typed(Baz $b, int ...$rest): void {}
'''),
    ("braces in strings", '''<?php
function braces($a = '{', $b = "}", $c = '{$x}') {}

function next_one() {}
'''),
    ("match and interpolation in the body", '''<?php
function describe(int $code, array $ctx = []): string {
    $s = "{$ctx['a']} and ${code}";
    return match (true) {
        $code >= 500 => "server {$s}",
        default => 'ok',
    };
}

function after_match($y) {}
'''),
    ("static and global variables", '''<?php
function counter(int $step = 1): int {
    static $n = 0;
    global $config;
    return $n += $step;
}
'''),
    ("class constants in defaults", '''<?php
class Config { const DEFAULT = ['a' => 1]; }
function configured(array $c = Config::DEFAULT, string $cls = Config::class) {}
'''),
    ("number literals and magic constants", '''<?php
function nums(int $a = 0x1F, float $b = 1_000.5, $c = -1, $d = +1, $e = __LINE__, $f = __DIR__ . '/x', $g = 0b11) {}
'''),
    ("attribute with a bracket in a string", '''<?php
#[Attr("]", [1, 2])]
function attributed(#[A("(,)")] $a, $b = ["]" => ")"]) {}
'''),
    ("callable and iterable defaults", '''<?php
function each_item(iterable $it = [], ?callable $cb = null, string $cls = \\stdClass::class): ?array {
    return null;
}
'''),
    ("alternative syntax block", '''<?php
if (true):
    function alt($a, $b = 'x') {}
endif;
'''),
    ("two braced namespaces", '''<?php
namespace A {
    function same($a) {}
}
namespace B {
    function same($b, $c = 1) {}
}
'''),
    ("hash comments that are not attributes", '''<?php
# [not an attribute, (really)
function hashed($a /* ( */, $b = 2 # ) comment
) {}
'''),
    ("names starting with keywords", '''<?php
function classify($x) {}
function enum_values(array $e = []) {}
function traitor(): never { exit(1); }
function interface_of($o) {}
function last_one($z) {}
'''),
    ("a close tag inside a line comment", '''<?php
// see ?> for details
function hidden($x) {}
<?php
function visible($y) {}
'''),
    ("halt compiler", '''<?php
function before_halt($a) {}
__halt_compiler();
function after_halt($b) {}
'''),
    ("more defaults", '''<?php
function more($a = array('x' => "y,z"), $b = null ?? 1, Closure|null $cb = null, array $d = [[], [1, [2]]]) {}
'''),
]

CORPUS = {"python": PYTHON, "javascript": JAVASCRIPT, "ruby": RUBY, "php": PHP}
