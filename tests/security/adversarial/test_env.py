"""Environment: a canary variable in fnbox's own environment (FNBOX_CANARY_<random>) must reach neither the
function's environment nor any /proc/<pid>/environ it can read (its own, init's, any other)."""
import secrets

from fnboxlib import ok, req

from .attacklib import c_code, parse_c, stopped
from .conftest import attack

ENV = {
    "python": r'''
import os
def f():
    out = {'env': dict(os.environ)}
    for p in ['self', 'thread-self'] + [p for p in os.listdir('/proc') if p.isdigit()]:
        try:
            with open('/proc/%s/environ' % p, 'rb') as fh:
                out['/proc/%s/environ' % p] = fh.read().decode('latin-1')
        except OSError as e:
            out['/proc/%s/environ' % p] = 'ERR:' + type(e).__name__
    return out
''',
    "javascript": r'''
const fs = require('fs');
function f() {
  const out = { env: Object.assign({}, process.env) };
  for (const p of ['self', 'thread-self', ...fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))]) {
    try { out[`/proc/${p}/environ`] = fs.readFileSync(`/proc/${p}/environ`, 'latin1'); }
    catch (e) { out[`/proc/${p}/environ`] = 'ERR:' + e.code; }
  }
  return out;
}
''',
    "ruby": r'''
def f
  out = { "env" => ENV.to_h }
  (["self", "thread-self"] + Dir.children("/proc").grep(/\A\d+\z/)).each do |p|
    out["/proc/#{p}/environ"] = begin
      File.binread("/proc/#{p}/environ").force_encoding("ISO-8859-1").encode("UTF-8")
    rescue SystemCallError => e
      "ERR:#{e.class}"
    end
  end
  out
end
''',
    "php": r'''<?php
function f() {
  $out = ['env' => getenv(), '_ENV' => $_ENV, '_SERVER' => array_filter($_SERVER, 'is_string')];
  $pids = array_merge(['self', 'thread-self'], array_filter(scandir('/proc'), 'ctype_digit'));
  foreach ($pids as $p) {
    $c = @file_get_contents("/proc/$p/environ");
    $out["/proc/$p/environ"] = $c === false ? 'ERR' : bin2hex($c);
  }
  return $out;
}
''',
    "c": r'''
extern char **environ;
const char *f(const char *name)
{
    static char buf[16384];
    begin_();
    const char *v = getenv(name);
    put_str("getenv", v ? v : "(unset)");
    size_t n = 0;
    for (char **e = environ; *e && n < sizeof buf - 1; e++) {
        int k = snprintf(buf + n, sizeof buf - n, "%s\n", *e);
        n = k < 0 || (size_t)k >= sizeof buf - n ? sizeof buf - 1 : n + (size_t)k;
    }
    put_buf("environ", buf, n);
    const char *procs[] = {"/proc/self/environ", "/proc/thread-self/environ", "/proc/1/environ",
                           "/proc/2/environ", "/proc/3/environ"};
    for (size_t i = 0; i < sizeof procs / sizeof *procs; i++) {
        int fd = open(procs[i], O_RDONLY);
        if (fd < 0) {
            put_rc(procs[i], -1, errno);
            continue;
        }
        ssize_t r = read(fd, buf, sizeof buf);
        close(fd);
        put_buf(procs[i], buf, r > 0 ? (size_t)r : 0);
    }
    return end_();
}
''',
}


@attack("env", "env_canary")
def test_env_canary(lang, box):
    name = "FNBOX_CANARY_" + secrets.token_hex(6).upper()
    value = "envcanary" + secrets.token_hex(12)
    args = [name] if lang == "c" else []
    code = c_code(ENV["c"]) if lang == "c" else ENV[lang]
    res = box.call(req(lang, code, "f", args, timeout=30), env={name: value})
    got = ok(res)
    got = parse_c(got) if lang == "c" else got
    own = got.get("/proc/self/environ", "")
    assert "PATH=" in own or "PATH=".encode().hex() in own, f"the attack could not read its own environ: {own[:300]}"
    text = res.raw + res.stderr
    evidence = [w for w in (name, value, name.encode().hex(), value.encode().hex()) if w in text]
    stopped("saw fnbox's environment", evidence)
