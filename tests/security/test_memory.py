"""Defence: a per-call memory limit (cgroup memory.max / memory.limit_in_bytes, default 256 MiB) that
also holds for Node (where RLIMIT_AS would break V8). Touching 768 MiB fails inside the sandbox; the
call ends with a non-success status and the next call works."""
from fnboxlib import call, describe, ok, req

HOG = {
    "python": ("def f(mb):\n"
               "    chunks = []\n"
               "    for _ in range(mb // 64):\n"
               "        chunks.append(b'x' * (64 << 20))  # written, so the pages are really used\n"
               "    return len(chunks)\n"),
    "javascript": ("function f(mb) {\n"
                   "  const chunks = [];\n"
                   "  for (let i = 0; i < mb / 64; i++) chunks.push(Buffer.alloc(64 << 20, 1));\n"
                   "  return chunks.length;\n}\n"),
}


def test_memory_hog_contained(lang):
    res = call(req(lang, HOG[lang], "f", [768], timeout=30), timeout=120)
    assert res.result["status"] in ("error", "crash"), describe(res.result)
    peak = (res.result.get("usage") or {}).get("peakMemoryBytes")
    if isinstance(peak, int):
        assert peak < 700 << 20, f"peak memory {peak} exceeds any sane limit"
    # the host (and fnbox) is fine afterwards
    assert ok(call(req(lang, HOG[lang], "f", [64]))) == 1
