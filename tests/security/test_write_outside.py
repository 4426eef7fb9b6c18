"""Defence: read-only overlays of the system dirs, read-only /etc, /dev, /proc and /.fnbox in a root that is
the call's own tmpfs, and a private /tmp (fresh tmpfs). Writes to /usr, /etc, /bin, /proc/sys are refused;
a write to /tmp or to any other path (/, /var, /root: the root's scratch space, as the seed allows) stays
inside the sandbox, is reported as the call's change and never appears on the host."""
import os
import secrets


from fnboxlib import call, describe, ok, per_path_probe, req

WRITER = per_path_probe("with open(p, 'w') as fh:\n"
                        "    fh.write('pwned')\n"
                        "out[p] = 'WROTE'\n",
                        "fs.writeFileSync(p, 'pwned'); out[p] = 'WROTE';")

MUST_FAIL_DIRS = ["/usr", "/usr/bin", "/usr/lib", "/etc", "/bin", "/lib", "/lib64", "/.fnbox", "/dev"]
SCRATCH_DIRS = ["/", "/var", "/root"]  # the root's own tmpfs: writable inside, never the host's


def test_writes_outside_workspace(lang):
    tok = "fnbox-write-" + secrets.token_hex(6)
    must_fail = [os.path.join(d, tok) for d in MUST_FAIL_DIRS]
    must_fail += ["/proc/sys/kernel/hostname", "/proc/sysrq-trigger", "/sys/kernel/" + tok]
    private = ["/tmp/" + tok] + [os.path.join(d, tok) for d in SCRATCH_DIRS if d != "/"] + ["/" + tok]
    allowed = ["/workspace/" + tok]
    host_paths = [os.path.join(d, tok) for d in MUST_FAIL_DIRS + SCRATCH_DIRS] + ["/tmp/" + tok]
    try:
        res = call(req(lang, WRITER[lang], "f", [must_fail + private + allowed]))
        got = ok(res)
        wrote = [p for p in must_fail if got.get(p) == "WROTE"]
        assert not wrote, f"writes to system directories succeeded inside the sandbox: {wrote}"
        assert got[allowed[0]] == "WROTE", f"the workspace must be writable: {describe(got)}"
        # /var and /root do not exist in the root: the writer does not create directories, so only "/" works
        assert got["/" + tok] == "WROTE", f"the root's scratch space must be writable: {describe(got)}"
        created = {c["path"] for c in res.result["files"]["created"]}
        assert {"/" + tok, "/tmp/" + tok, allowed[0]} <= created, describe(res.result["files"])
        leaked = [p for p in host_paths if os.path.lexists(p)]
        assert not leaked, f"sandbox writes reached the host: {leaked}"
    finally:
        for p in host_paths:
            if os.path.lexists(p) and not os.path.isdir(p):
                os.unlink(p)


def test_private_tmp_is_fresh_per_call():
    """A file left in /tmp by one call is not visible to the next (nor on the host)."""
    tok = "fnbox-tmp-" + secrets.token_hex(6)
    code = ("import os\ndef f(tok, write):\n    p = '/tmp/' + tok\n    existed = os.path.exists(p)\n"
            "    if write:\n        open(p, 'w').write('x')\n    return existed\n")
    assert ok(call(req("python", code, "f", [tok, True]))) is False
    assert ok(call(req("python", code, "f", [tok, False]))) is False
    assert not os.path.exists("/tmp/" + tok)


def test_no_device_escape():
    """Only a minimal /dev: no disks, no /dev/mem; mknod refused."""
    code = ("import os, stat\ndef f():\n"
            "    out = {'dev': sorted(os.listdir('/dev'))}\n"
            "    try:\n        os.mknod('/workspace/sda', 0o600 | stat.S_IFBLK, os.makedev(8, 0))\n"
            "        out['mknod'] = 'CREATED'\n"
            "    except OSError as e:\n        out['mknod'] = 'DENIED'\n"
            "    return out\n")
    got = ok(call(req("python", code, "f", [])))
    assert got["mknod"] == "DENIED", describe(got)
    bad = [d for d in got["dev"] if d in ("mem", "kmem", "port", "sda", "vda", "nvme0", "nvme0n1", "kmsg")]
    assert not bad, f"host devices visible in the sandbox's /dev: {bad}"
