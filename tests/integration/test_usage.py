"""`usage {wallMs, cpuMs, peakMemoryBytes}` describes what the call's processes really used: CPU time
(including a child the function waited for), wall time, and peak memory."""
from fnboxlib import call, describe, req

BURN = {
    "python": ("import subprocess, sys, time\n"
               "def f(own, child):\n"
               "    t = time.process_time()\n"
               "    while time.process_time() - t < own:\n"
               "        pass\n"
               "    if child:\n"
               "        subprocess.run([sys.executable, '-c',\n"
               "            'import time\\nt = time.process_time()\\nwhile time.process_time() - t < %r: pass' % child])\n"
               "    data = b'x' * (96 << 20)\n"
               "    return len(data)\n"),
    "javascript": ("const cp = require('child_process');\n"
                   "function f(own, child) {\n"
                   "  const t = process.cpuUsage();\n"
                   "  while (true) { const u = process.cpuUsage(t); if ((u.user + u.system) / 1e6 >= own) break; }\n"
                   "  if (child) cp.spawnSync(process.execPath, ['-e',\n"
                   "    `const t = process.cpuUsage(); while (true) { const u = process.cpuUsage(t); if ((u.user + u.system) / 1e6 >= ${child}) break; }`]);\n"
                   "  const b = Buffer.alloc(96 << 20, 1);\n"
                   "  return b.length;\n}\n"),
    "ruby": ("def cpu = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID)\n"
             "def f(own, child)\n"
             "  t = cpu\n"
             "  nil while cpu - t < own\n"
             "  if child\n"
             "    system('/usr/bin/ruby', '--disable-gems', '-e',\n"
             "      \"t = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID); nil while Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID) - t < #{child}\")\n"
             "  end\n"
             "  data = 'x' * (96 << 20)\n"
             "  data.bytesize\n"
             "end\n"),
    "php": ("function cpu() { $u = getrusage(); return $u['ru_utime.tv_sec'] + $u['ru_utime.tv_usec'] / 1e6 "
            "+ $u['ru_stime.tv_sec'] + $u['ru_stime.tv_usec'] / 1e6; }\n"
            "function f($own, $child) {\n"
            "  $t = cpu();\n"
            "  while (cpu() - $t < $own) {}\n"
            "  if ($child) {\n"
            "    $p = proc_open([PHP_BINARY, '-r', '$t = hrtime(true); while (getrusage()[\"ru_utime.tv_sec\"] * 1e6 + getrusage()[\"ru_utime.tv_usec\"] < ' . ($child * 1e6) . ') {}'], [], $pipes);\n"
            "    proc_close($p);\n"
            "  }\n"
            "  $data = str_repeat('x', 96 << 20);\n"
            "  return strlen($data);\n"
            "}\n"),
}


def test_usage_counts_own_and_child_cpu(lang):
    res = call(req(lang, BURN[lang], "f", [0.3, 0.3]))
    result = res.result
    assert result["status"] == "success" and result["result"] == 96 << 20, describe(result)
    usage = result.get("usage")
    assert isinstance(usage, dict), describe(result)
    assert usage["cpuMs"] >= 500, f"cpuMs {usage['cpuMs']} < 0.6 s burnt by the function and its child"
    assert usage["cpuMs"] < 20000
    assert usage["wallMs"] >= 550, describe(usage)
    assert usage["wallMs"] <= res.elapsed * 1000 + 50, f"wallMs {usage['wallMs']} > the CLI's own runtime"
    assert usage["peakMemoryBytes"] >= 96 << 20, f"peakMemoryBytes {usage['peakMemoryBytes']} < 96 MiB touched"
    assert result["meta"]["duration"] >= usage["wallMs"] * 0.9


def test_usage_counts_unwaited_background_cpu():
    """CPU burnt by a background process the function never waits for (killed at the end of the call)
    belongs to the call too."""
    code = ("import subprocess, sys, time\n"
            "def f():\n"
            "    subprocess.Popen([sys.executable, '-c', 'while True: pass'])\n"
            "    time.sleep(0.8)\n"
            "    return 'left it running'\n")
    result = call(req("python", code, "f", [])).result
    assert result["status"] == "success", describe(result)
    assert result["usage"]["cpuMs"] >= 400, f"cpuMs {result['usage']['cpuMs']}: the background child's CPU is missing"
