#!/usr/bin/env python3
"""Session kernels: trivial executes per second through the C API (bench/bench_kernel.c, built here against
build/libfnbox.a: a C driver, because the C API is what the goal names) and one execute's overhead over the
same cell run in-process (the interpreter evaluating `1` itself, timed in the same run). Prints ratios.
Usage: bench/bench_kernel.py [N]"""
import json
import subprocess
import sys
import timeit

N = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
EXE = "build/bench_kernel"
subprocess.run(["cc", "-std=gnu11", "-O2", "-Iinclude", "-Isrc", "-o", EXE, "bench/bench_kernel.c", "build/libfnbox.a",
                "-lseccomp", "-ljansson", "-lnettle", "-lfuse3", "-lpthread"], check=True)


def in_process_ms(lang):
    if lang == "python":
        code = compile("1", "c", "eval")
        n = 200000
        return timeit.timeit(lambda: eval(code, {}), number=n) / n * 1e3
    if lang == "ruby":  # eval of the cell in one binding, as the kernel does
        rb = ("b=binding;n=50000;t=Process.clock_gettime(Process::CLOCK_MONOTONIC);n.times{b.eval('1')};"
              "puts (Process.clock_gettime(Process::CLOCK_MONOTONIC)-t)*1e3/n")
        return float(subprocess.run(["ruby", "-e", rb], capture_output=True, text=True, check=True).stdout)
    if lang == "php":  # eval of the cell, as the kernel includes it
        php = ("$n=50000;$t=hrtime(true);for($i=0;$i<$n;$i++){eval('return 1;');}"
               "echo (hrtime(true)-$t)/1e6/$n;")
        return float(subprocess.run(["php", "-r", php], capture_output=True, text=True, check=True).stdout)
    js = ("const vm=require('vm');const n=20000;const t=process.hrtime.bigint();"
          "for(let i=0;i<n;i++)new vm.Script('1').runInThisContext();"
          "console.log(Number(process.hrtime.bigint()-t)/1e6/n)")
    return float(subprocess.run(["node", "-e", js], capture_output=True, text=True, check=True).stdout)


for lang in ("python", "javascript", "ruby", "php"):
    r = json.loads(subprocess.run([EXE, str(N), lang], capture_output=True, text=True, check=True).stdout)
    base = in_process_ms(lang)
    print(f"{lang:10s} {r['per_second']:8.0f} executes/s  {r['mean_ms']:.4f} ms each  in-process {base:.4f} ms"
          f"  overhead {r['mean_ms'] - base:.4f} ms  ratio {r['mean_ms'] / base:.0f}x  goal 2000/s: "
          f"{r['per_second'] / 2000:.1f}x, overhead <= 0.3 ms: {'yes' if r['mean_ms'] - base <= 0.3 else 'NO'}")
