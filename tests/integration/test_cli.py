"""The CLI surface: --help, call --help, doctor, unknown verbs."""
from fnboxlib import run_cli


def test_help():
    proc = run_cli(["--help"])
    out = proc.stdout.decode() + proc.stderr.decode()
    assert proc.returncode == 0, out
    assert "call" in out and "doctor" in out, out


def test_call_help_documents_flags():
    proc = run_cli(["call", "--help"])
    out = proc.stdout.decode() + proc.stderr.decode()
    assert proc.returncode == 0, out
    assert "FILE" in out or "file" in out, out


def test_doctor_lists_features_and_runtimes():
    proc = run_cli(["doctor"], timeout=60)
    out = proc.stdout.decode() + proc.stderr.decode()
    assert proc.returncode in (0, 1), out
    low = out.lower()
    for word in ("python", "node", "seccomp", "namespace"):
        assert word in low, f"doctor output does not mention {word!r}:\n{out}"


def test_unknown_verb_fails():
    proc = run_cli(["definitely-not-a-verb"])
    assert proc.returncode != 0
    assert proc.stderr.strip(), "an unknown verb must be explained on stderr"
