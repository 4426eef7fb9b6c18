"""20 calls in parallel: each gets its own result, output and private /workspace and /tmp (no
cross-talk between sandboxes)."""
import secrets
from concurrent.futures import ThreadPoolExecutor

from fnboxlib import call, describe, req

CODE = {
    "python": ("import os, time\n"
               "def f(token):\n"
               "    print(token)\n"
               "    for d in ('/workspace', '/tmp'):\n"
               "        with open(os.path.join(d, 'mine-' + token), 'w') as fh:\n"
               "            fh.write(token)\n"
               "    time.sleep(0.3)  # overlap with the others\n"
               "    seen = sorted(os.listdir('/workspace')) + sorted(os.listdir('/tmp'))\n"
               "    return {'token': token, 'seen': seen, 'pid_ok': os.getpid() > 0}\n"),
    "javascript": ("const fs = require('fs');\n"
                   "async function f(token) {\n"
                   "  console.log(token);\n"
                   "  for (const d of ['/workspace', '/tmp']) fs.writeFileSync(d + '/mine-' + token, token);\n"
                   "  await new Promise(r => setTimeout(r, 300));\n"
                   "  const seen = fs.readdirSync('/workspace').sort().concat(fs.readdirSync('/tmp').sort());\n"
                   "  return { token, seen, pid_ok: process.pid > 0 };\n}\n"),
    "ruby": ("def f(token)\n"
             "  puts token\n"
             "  ['/workspace', '/tmp'].each { |d| File.write(File.join(d, 'mine-' + token), token) }\n"
             "  sleep 0.3\n"
             "  seen = Dir.children('/workspace').sort + Dir.children('/tmp').sort\n"
             "  { 'token' => token, 'seen' => seen, 'pid_ok' => Process.pid > 0 }\n"
             "end\n"),
    "php": ("function f($token) {\n"
            "  echo $token, \"\\n\";\n"
            "  foreach (['/workspace', '/tmp'] as $d) file_put_contents(\"$d/mine-$token\", $token);\n"
            "  usleep(300000);\n"
            "  $ls = function ($d) { $n = array_values(array_diff(scandir($d), ['.', '..'])); sort($n); return $n; };\n"
            "  return ['token' => $token, 'seen' => array_merge($ls('/workspace'), $ls('/tmp')), 'pid_ok' => getmypid() > 0];\n"
            "}\n"),
}
LANGS = list(CODE)


def one(i):
    lang = LANGS[i % len(LANGS)]         # 5 calls of each language, all at once
    token = f"tok{i}x{secrets.token_hex(6)}"
    return lang, token, call(req(lang, CODE[lang], "f", [token], timeout=60), timeout=180)


def test_twenty_parallel_calls():
    assert len(LANGS) == 4
    with ThreadPoolExecutor(max_workers=20) as pool:
        outcomes = list(pool.map(one, range(20)))
    problems = []
    for lang, token, res in outcomes:
        result = res.result
        if result["status"] != "success":
            problems.append(f"{lang} {token}: {describe(result)}")
            continue
        got = result["result"]
        if got["token"] != token:
            problems.append(f"{lang} {token}: got someone else's result {got['token']}")
        if result["stdout"] != token + "\n":
            problems.append(f"{lang} {token}: stdout {result['stdout']!r}")
        others = [name for name in got["seen"] if name.startswith("mine-") and name != "mine-" + token]
        if others:
            problems.append(f"{lang} {token}: sees other calls' files {others}")
        if got["seen"].count("mine-" + token) != 2:
            problems.append(f"{lang} {token}: own files missing from /workspace or /tmp: {got['seen']}")
    assert not problems, "\n".join(problems)


def test_twenty_parallel_calls_each_language(lang):
    """20 calls of one language at once (the sandboxes of one runtime do not collide either)."""
    def one_of(i):
        token = f"{lang[:2]}{i}x{secrets.token_hex(6)}"
        return token, call(req(lang, CODE[lang], "f", [token], timeout=60), timeout=180)

    with ThreadPoolExecutor(max_workers=20) as pool:
        outcomes = list(pool.map(one_of, range(20)))
    problems = []
    for token, res in outcomes:
        result = res.result
        if result["status"] != "success":
            problems.append(f"{token}: {describe(result)}")
        elif result["result"]["token"] != token or result["stdout"] != token + "\n":
            problems.append(f"{token}: crossed result/output {describe(result)}")
        elif [n for n in result["result"]["seen"] if n.startswith("mine-") and n != "mine-" + token]:
            problems.append(f"{token}: sees other calls' files {result['result']['seen']}")
    assert not problems, "\n".join(problems)
