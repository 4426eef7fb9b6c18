"""Devices: /dev holds only null, zero, full, random and urandom (plus fd/std* links and the shm tmpfs); no
disk, memory, kernel log, terminal, KVM, FUSE, tun... device opens, /sys is absent, and device nodes the
function makes itself (mknod) cannot be made or opened."""
import os

from fnboxlib import ok, req

from .attacklib import c_code, parse_c, stopped
from .conftest import attack

ALLOWED_DEV = {"null", "zero", "full", "random", "urandom", "fd", "stdin", "stdout", "stderr", "shm"}
SENSITIVE = ["/dev/mem", "/dev/kmem", "/dev/port", "/dev/kmsg", "/dev/kvm", "/dev/fuse", "/dev/tty",
             "/dev/console", "/dev/tty0", "/dev/ptmx", "/dev/net/tun", "/dev/loop0", "/dev/loop-control",
             "/dev/mapper/control", "/dev/cpu/0/msr", "/dev/hwrng", "/dev/vhost-net", "/dev/vsock", "/dev/rtc0",
             "/dev/input/event0", "/dev/dri/card0", "/dev/uinput", "/dev/userfaultfd", "/dev/sg0", "/dev/nvram",
             "/sys/block", "/sys/class/net", "/sys/kernel/notes", "/sys/firmware", "/proc/kcore", "/proc/kmsg"]


def host_disks():
    """The host's block devices (/sys/block), as /dev paths."""
    try:
        return ["/dev/" + n for n in sorted(os.listdir("/sys/block"))][:12]
    except OSError:
        return ["/dev/sda", "/dev/vda", "/dev/nvme0n1"]


DEV = {
    "python": r'''
import os
def f(paths):
    out = {'/dev': sorted(os.listdir('/dev'))}
    for p in paths:
        try:
            fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
            try:
                out[p] = 'OPENED:' + os.read(fd, 16).hex()
            except OSError as e:
                out[p] = 'OPENED'
            os.close(fd)
        except IsADirectoryError:
            out[p] = 'DIR:' + ' '.join(sorted(os.listdir(p)))
        except OSError as e:
            out[p] = 'ERR:%d' % e.errno
    return out
''',
    "javascript": r'''
const fs = require('fs');
function f(paths) {
  const out = { '/dev': fs.readdirSync('/dev').sort() };
  const flags = fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOCTTY;
  for (const p of paths) {
    try {
      if (fs.statSync(p).isDirectory()) { out[p] = 'DIR:' + fs.readdirSync(p).join(' '); continue; }
      const fd = fs.openSync(p, flags);
      out[p] = 'OPENED';
      try { const b = Buffer.alloc(16); const n = fs.readSync(fd, b, 0, 16, null); out[p] += ':' + b.toString('hex', 0, n); } catch (e) {}
      fs.closeSync(fd);
    } catch (e) { out[p] = 'ERR:' + e.code; }
  }
  return out;
}
''',
    "ruby": r'''
def f(paths)
  out = { "/dev" => Dir.children("/dev").sort }
  paths.each do |p|
    out[p] = begin
      if File.directory?(p)
        "DIR:" + Dir.children(p).join(" ")
      else
        File.open(p, File::RDONLY | File::NONBLOCK | File::NOCTTY) do |fh|
          "OPENED:" + (fh.read_nonblock(16, exception: false).to_s.unpack1("H*") rescue "")
        end
      end
    rescue SystemCallError, IOError => e
      "ERR:#{e.class}"
    end
  end
  out
end
''',
    "php": r'''<?php
function f($paths) {
  $out = ['/dev' => array_values(array_diff(scandir('/dev'), ['.', '..']))];
  foreach ($paths as $p) {
    if (@is_dir($p)) { $out[$p] = 'DIR:' . implode(' ', @scandir($p) ?: []); continue; }
    $h = @fopen($p, 'rb');
    if ($h === false) { $out[$p] = 'ERR'; continue; }
    stream_set_blocking($h, false);
    $out[$p] = 'OPENED:' . bin2hex((string)@fread($h, 16));
    fclose($h);
  }
  return $out;
}
''',
}


@attack("devices", "dev_open")
def test_dev_open(lang, box):
    """List /dev and open every sensitive device (and the host's disks, /sys, /proc/kcore) for reading."""
    paths = SENSITIVE + host_disks()
    got = ok(box.call(req(lang, DEV[lang], "f", [paths], timeout=20)))
    evidence = {p: v[:80] for p, v in got.items() if p != "/dev" and v.startswith(("OPENED", "DIR:"))}
    extra = sorted(set(got["/dev"]) - ALLOWED_DEV)
    if extra:
        evidence["/dev"] = extra
    stopped("reached a device", evidence)


MKNOD = {
    "python": r'''
import os, stat
def f(nodes):
    out = {}
    for path, kind, major, minor in nodes:
        mode = (stat.S_IFCHR if kind == 'c' else stat.S_IFBLK) | 0o666
        try:
            os.mknod(path, mode, os.makedev(major, minor))
            out[path] = 'MADE'
        except OSError as e:
            out[path] = 'ERR:%d' % e.errno
            continue
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
            out[path] = 'OPENED:' + os.read(fd, 16).hex()
            os.close(fd)
        except OSError as e:
            out[path] += ' open ERR:%d' % e.errno
    return out
''',
    "c": r'''
#include <sys/sysmacros.h>
const char *f(char *nodes)
{
    begin_();
    for (char *l; (l = next_line(&nodes)) != NULL;) {
        char path[128], kind;
        unsigned major, minor;
        if (sscanf(l, "%127s %c %u %u", path, &kind, &major, &minor) != 4)
            continue;
        if (mknod(path, (kind == 'c' ? S_IFCHR : S_IFBLK) | 0666, makedev(major, minor)) < 0) {
            put_rc(path, -1, errno);
            continue;
        }
        int fd = open(path, O_RDONLY | O_NONBLOCK);
        char buf[16];
        ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf);
        put_str(path, fd < 0 ? "MADE" : (n > 0 ? "OPENED+READ" : "OPENED"));
        if (fd >= 0)
            close(fd);
    }
    return end_();
}
''',
}


@attack("devices", "mknod")
def test_mknod(lang, box):
    """Make device nodes in each writable area (memory, kernel log, the host's root disk) and open them."""
    st = os.stat("/")
    disk = ("b", os.major(st.st_dev), os.minor(st.st_dev))
    kinds = [("c", 1, 1), ("c", 1, 11), disk]   # /dev/mem, /dev/kmsg, the host's root file system's disk
    nodes = [[f"{d}/node{i}", k, ma, mi] for d in ("/tmp", "/workspace", "/dev/shm") for i, (k, ma, mi) in enumerate(kinds)]
    if lang == "c":
        got = parse_c(ok(box.call(req(lang, c_code(MKNOD["c"]), "f", ["\n".join(" ".join(map(str, n)) for n in nodes)],
                                      timeout=20))))
    else:
        got = ok(box.call(req(lang, MKNOD[lang], "f", [nodes], timeout=20)))
    assert len(got) == len(nodes), got
    stopped("made a device node", {p: v for p, v in got.items() if not str(v).startswith("ERR")})
