"""Defence: the sandbox's /etc is fnbox's own few files plus an allow-list of the system root's entries
(src/sandbox/rootfs.c k_etc_allowed; SECURITY.md, "What the sandbox sees of /etc"). Secrets and the host's
service configuration are never visible, whatever a package adds to the host's /etc later; what libraries
read at run time (the CA store, fontconfig, matplotlibrc, mime.types) is."""
import os

from fnboxlib import call, describe, ok, per_path_probe, req

READER = per_path_probe("import os\n"
                        "if os.path.isdir(p):\n"
                        "    out[p] = 'DIR:' + ','.join(sorted(os.listdir(p)))\n"
                        "else:\n"
                        "    with open(p, 'rb') as fh:\n"
                        "        out[p] = 'READ:%d' % len(fh.read())\n",
                        "out[p] = fs.statSync(p).isDirectory() ? 'DIR:' + fs.readdirSync(p).sort().join(',')\n"
                        "                                       : 'READ:' + fs.readFileSync(p).length;")

# Never visible. Most exist on the test machines (shadow, gshadow, machine-id, ssh, ssl/private); the rest
# are checked in case they do.
SECRETS = ["/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-", "/etc/machine-id", "/etc/ssh",
           "/etc/ssh/ssh_host_ed25519_key", "/etc/ssl/private", "/etc/sudoers", "/etc/sudoers.d",
           "/etc/security/opasswd", "/etc/pip.conf", "/etc/npmrc", "/etc/gitconfig", "/etc/wgetrc",
           "/etc/environment", "/etc/resolv.conf", "/etc/subuid", "/etc/apt/auth.conf", "/etc/postgresql",
           "/etc/ldap", "/etc/cron.d", "/etc/systemd", "/etc/pam.d",
           # the same through /usr's links into /etc (Debian: /usr/lib/ssl/private -> /etc/ssl/private)
           "/usr/lib/ssl/private"]

# Visible when the host has them (scripts/install-deps.sh installs the packages that bring them).
LIBRARY_FILES = ["/etc/ssl/certs/ca-certificates.crt", "/etc/fonts/fonts.conf", "/etc/matplotlibrc",
                 "/etc/mime.types", "/etc/ssl/openssl.cnf", "/etc/localtime", "/etc/services"]

# Everything the sandbox's /etc may hold: fnbox's own files and the allow-list's top-level names.
ALLOWED_TOP = {"passwd", "group", "hosts", "hostname", "nsswitch.conf",
               "ld.so.cache", "localtime", "timezone", "locale.alias", "default", "services", "protocols",
               "gai.conf", "mime.types", "magic", "magic.mime", "os-release", "ssl", "pki", "fonts",
               "matplotlibrc", "alternatives", "php", "python3", "python3.11", "python3.12", "python3.13"}


def test_secrets_of_etc_invisible(lang):
    assert os.path.exists("/etc/shadow") and os.path.exists("/etc/ssl/private"), \
        "sanity: the host has the files this test expects the sandbox not to show"
    got = ok(call(req(lang, READER[lang], "f", [SECRETS])))
    seen = {p: v for p, v in got.items() if not v.startswith("DENIED:")}
    assert not seen, f"host secrets visible in the sandbox: {describe(seen)}"


def test_library_config_visible(lang):
    present = [p for p in LIBRARY_FILES if os.path.isfile(p)]
    assert "/etc/ssl/certs/ca-certificates.crt" in present, "sanity: the host has a CA bundle (ca-certificates)"
    got = ok(call(req(lang, READER[lang], "f", [present])))
    for p in present:
        with open(p, "rb") as fh:
            assert got[p] == f"READ:{len(fh.read())}", describe(got)


def test_etc_holds_only_the_allow_list(lang):
    """Nothing of the host's /etc beyond the list: a new package's configuration stays invisible."""
    got = ok(call(req(lang, READER[lang], "f", [["/etc", "/etc/ssl", "/etc/default"]])))
    assert got["/etc"].startswith("DIR:"), describe(got)
    extra = set(got["/etc"][4:].split(",")) - ALLOWED_TOP
    assert not extra, f"/etc entries outside the allow-list: {sorted(extra)}"
    if got["/etc/ssl"].startswith("DIR:"):
        assert set(got["/etc/ssl"][4:].split(",")) <= {"certs", "openssl.cnf", "cert.pem"}, describe(got)
    if got["/etc/default"].startswith("DIR:"):
        assert set(got["/etc/default"][4:].split(",")) <= {"locale"}, describe(got)
