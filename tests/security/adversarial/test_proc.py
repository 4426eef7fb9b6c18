"""/proc: the host's root through /proc/1/root, init's memory through /proc/1/mem, host processes, writes to
/proc/sys, and a probe of the function's own status (capabilities, no_new_privs, seccomp)."""
import re

from fnboxlib import ok, req

from .attacklib import READ, HostSleeper, host_reads_proc1, lines, parse_c, run_c, skip_unless_host_allows, stopped
from .conftest import attack

# Names in the host's root that the sandbox's root (workspace .fnbox tmp dev proc etc lib* sbin bin usr) lacks.
HOST_ONLY = {"var", "home", "root", "boot", "srv", "opt", "mnt", "run", "sys", "media"}


@attack("proc", "proc1_root")
def test_proc1_root(lang, box, canary):
    """PID 1's root, cwd and files: with the host's init there, they are the host's file system."""
    skip_unless_host_allows("read PID 1's root", host_reads_proc1)
    paths = ["/proc/1/root", "/proc/1/root/", "/proc/1/cwd", "/proc/1/root/etc/shadow", "/proc/1/root/var",
             "/proc/1/root/tmp", "/proc/1/root/proc/1/root", "/proc/1/environ", "/proc/1/cmdline",
             "/proc/1/root/etc/hostname"]
    for p in canary.files:
        paths += ["/proc/1/root" + p, "/proc/1/cwd" + p, "/proc/1/root/proc/1/root" + p]
    got = ok(box.call(req(lang, READ[lang], "f", [paths], timeout=20)))
    evidence = canary.found_in(got)
    for p, v in got.items():
        if v.startswith("DIR:") and HOST_ONLY & set(v[4:].split()):
            evidence[p] = v[:300]
        if p.endswith("/etc/hostname") and v.startswith("READ:") and v.strip() != "READ:fnbox":
            evidence[p] = v[:100]
        if p.endswith("/etc/shadow") and v.startswith("READ:"):
            evidence[p] = v[:100]
    stopped("reached the host through /proc/1", evidence)


INIT_MEM = {
    "javascript": r'''
const fs = require('fs');
function f() {
  const out = {};
  let maps = '';
  try { maps = fs.readFileSync('/proc/1/maps', 'latin1'); out.maps = maps.slice(0, 300); }
  catch (e) { out.maps = 'ERR:' + e.code; }
  const addrs = maps.split('\n').filter((l) => / r/.test(l)).map((l) => parseInt(l.split('-')[0], 16));
  if (!addrs.length) addrs.push(0x400000, 0x555555554000);
  try {
    const fd = fs.openSync('/proc/1/mem', 'r');
    out.open = 'OPENED';
    for (const a of addrs.slice(0, 4)) {
      const buf = Buffer.alloc(64);
      try { const n = fs.readSync(fd, buf, 0, 64, a); if (n > 0) out['mem@' + a.toString(16)] = buf.toString('hex', 0, n); }
      catch (e) { out['mem@' + a.toString(16)] = 'ERR:' + e.code; }
    }
    fs.closeSync(fd);
  } catch (e) { out.open = 'ERR:' + e.code; }
  try { out.stack = fs.readFileSync('/proc/1/stack', 'latin1'); } catch (e) { out.stack = 'ERR:' + e.code; }
  try { out.exe = fs.readlinkSync('/proc/1/exe'); } catch (e) { out.exe = 'ERR:' + e.code; }
  return out;
}
''',
    "c": r'''
const char *f(void)
{
    static char maps[4096], hex[200];
    unsigned char buf[64];
    begin_();
    int fd = open("/proc/1/maps", O_RDONLY);
    ssize_t n = fd < 0 ? -1 : read(fd, maps, sizeof maps - 1);
    int e = errno;
    if (fd >= 0)
        close(fd);
    if (n > 0) {
        maps[n] = 0;
        put_buf("maps", maps, (size_t)(n < 300 ? n : 300));
    } else {
        put_rc("maps", -1, e);
    }
    unsigned long addr = 0x400000;
    if (n > 0)
        sscanf(maps, "%lx-", &addr);
    fd = open("/proc/1/mem", O_RDONLY);
    put_rc("open", fd < 0 ? -1 : 0, errno);
    if (fd >= 0) {
        ssize_t r = pread(fd, buf, sizeof buf, (off_t)addr);
        if (r > 0) {
            for (ssize_t i = 0; i < r; i++)
                sprintf(hex + 2 * i, "%02x", buf[i]);
            put_str("mem", hex);
        } else {
            put_rc("mem", -1, errno);
        }
        close(fd);
    }
    char exe[256];
    ssize_t l = readlink("/proc/1/exe", exe, sizeof exe - 1);
    if (l > 0)
        put_buf("exe", exe, (size_t)l);
    else
        put_rc("exe", -1, errno);
    return end_();
}
''',
}


@attack("proc", "init_mem")
def test_init_mem(lang, box):
    """Read PID 1's memory map and memory (/proc/1/maps, /proc/1/mem), its kernel stack and its executable."""
    skip_unless_host_allows("read PID 1's memory map", host_reads_proc1)
    if lang == "c":
        got = run_c(box, INIT_MEM["c"])
    else:
        got = ok(box.call(req(lang, INIT_MEM[lang], "f", [], timeout=20)))
    evidence = {k: v for k, v in got.items() if not str(v).startswith("ERR:") and k != "open"}
    stopped("read init's memory or map", evidence)


SCAN = {
    "ruby": r'''
def f(mark)
  pids = Dir.children("/proc").select { |p| p =~ /\A\d+\z/ }
  hits = pids.select do |p|
    begin
      File.binread("/proc/#{p}/cmdline").include?(mark)
    rescue SystemCallError
      false
    end
  end
  { "pids" => pids.size, "hits" => hits }
end
''',
    "c": r'''
const char *f(const char *mark)
{
    static char cmd[8192], hits[4096];
    int pids = 0;
    hits[0] = 0;
    DIR *d = opendir("/proc");
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        pids++;
        char p[64];
        snprintf(p, sizeof p, "/proc/%s/cmdline", e->d_name);
        int fd = open(p, O_RDONLY);
        if (fd < 0)
            continue;
        ssize_t n = read(fd, cmd, sizeof cmd - 1);
        close(fd);
        for (ssize_t i = 0; i < n; i++)
            if (!cmd[i])
                cmd[i] = ' ';
        if (n > 0) {
            cmd[n] = 0;
            if (strstr(cmd, mark)) {
                strncat(hits, e->d_name, sizeof hits - strlen(hits) - 2);
                strcat(hits, " ");
            }
        }
    }
    if (d)
        closedir(d);
    begin_();
    put_int("pids", pids);
    put_str("hits", hits);
    return end_();
}
''',
}


@attack("proc", "host_processes")
def test_host_processes(lang, box):
    """Look for a host process (carrying a marker in its argv) among the processes the function can see."""
    sleeper = HostSleeper(30)
    try:
        if lang == "c":
            got = run_c(box, SCAN["c"], [sleeper.mark])
        else:
            got = ok(box.call(req(lang, SCAN[lang], "f", [sleeper.mark], timeout=20)))
    finally:
        sleeper.close()
    assert got["pids"] >= 1, got
    stopped("saw a host process", got["hits"])


PROC_SYS = {
    "python": r'''
import os
def f(paths):
    out = {}
    for p in paths:
        try:
            fd = os.open(p, os.O_WRONLY)   # opened, never written: the open is the permission check
            os.close(fd)
            out[p] = 'OPENED FOR WRITING'
        except OSError as e:
            out[p] = 'ERR:' + str(e.errno)
    return out
''',
    "ruby": r'''
def f(paths)
  out = {}
  paths.each do |p|
    out[p] = begin
      File.open(p, File::WRONLY) { }   # opened, never written: the open is the permission check
      "OPENED FOR WRITING"
    rescue SystemCallError => e
      "ERR:#{e.errno}"
    end
  end
  out
end
''',
}
PROC_SYS_PATHS = ["/proc/sys/kernel/core_pattern", "/proc/sys/kernel/modprobe", "/proc/sys/vm/drop_caches",
                  "/proc/sys/kernel/hostname", "/proc/sys/kernel/sysrq", "/proc/sys/net/ipv4/ip_forward",
                  "/proc/sysrq-trigger", "/proc/sys/fs/binfmt_misc/register", "/proc/sys/kernel/randomize_va_space"]


@attack("proc", "proc_sys_write")
def test_proc_sys_write(lang, box):
    """Open host-wide kernel settings (/proc/sys, /proc/sysrq-trigger) for writing (without writing)."""
    got = ok(box.call(req(lang, PROC_SYS[lang], "f", [PROC_SYS_PATHS], timeout=20)))
    assert set(got) == set(PROC_SYS_PATHS), got
    stopped("opened kernel settings for writing", {p: v for p, v in got.items() if v == "OPENED FOR WRITING"})


def status_fields(box, lang):
    paths = ["/proc/self/status"]
    arg = lines(paths) if lang == "c" else paths
    got = ok(box.call(req(lang, READ[lang], "f", [arg], timeout=30)))
    got = parse_c(got) if lang == "c" else got
    text = got["/proc/self/status"]
    assert text.startswith("READ:"), got
    fields = dict(re.findall(r"^(\w+):\s*(.*?)\s*$", text[5:], re.M))
    for k in ("CapEff", "NoNewPrivs", "Seccomp"):
        assert k in fields, f"/proc/self/status has no {k}: {text[:1000]}"
    return fields


@attack("proc", "status_seccomp")
def test_status_seccomp(lang, box):
    """The function's own /proc/self/status: Seccomp 2 (filter mode) with a filter, NoNewPrivs 1."""
    fields = status_fields(box, lang)
    evidence = {}
    if fields["Seccomp"] != "2":
        evidence["Seccomp"] = fields["Seccomp"]
    if int(fields.get("Seccomp_filters", "1")) < 1:
        evidence["Seccomp_filters"] = fields["Seccomp_filters"]
    if fields["NoNewPrivs"] != "1":
        evidence["NoNewPrivs"] = fields["NoNewPrivs"]
    stopped("runs without its seccomp filter / no_new_privs", evidence)


@attack("proc", "status_caps")
def test_status_caps(lang, box):
    """The function's own capability sets: all empty (effective, permitted, inheritable, bounding, ambient)."""
    fields = status_fields(box, lang)
    evidence = {k: v for k, v in fields.items() if k.startswith("Cap") and int(v, 16) != 0}
    stopped("holds capabilities", evidence)

