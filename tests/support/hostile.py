#!/usr/bin/env python3
"""A hostile peer: tries every escape tests/sandbox.rs names and reports.

Usage: hostile.py CONFIG_JSON [ATTEMPT...]

CONFIG names the places to attack (see tests/sandbox.rs, `Scene`). Prints
one JSON object on stdout: for each attempt, {"done": bool, "detail": str}
where `done` means the attempt succeeded. Only the standard library: it
runs as a sandboxed peer and as a test command would.
"""

import ctypes
import errno
import fcntl
import json
import os
import signal
import socket
import subprocess
import sys
import time

CFG = json.loads(sys.argv[1])
# A run's private tmp is only known inside it: "$TMPDIR" names it.
CFG["tmp"] = os.path.expandvars(CFG.get("tmp", "$TMPDIR"))
ONLY = set(sys.argv[2:])
LIBC = ctypes.CDLL(None, use_errno=True)
OUT = {}


def _timeout(*_):
    # A hang must not hang the test: what was found so far, and a marker.
    OUT["timeout"] = {"done": True, "detail": "hostile.py ran past its deadline"}
    json.dump(OUT, sys.stdout)
    sys.stdout.write("\n")
    sys.stdout.flush()
    os._exit(3)


signal.signal(signal.SIGALRM, _timeout)
signal.alarm(int(CFG.get("deadline", 60)))


def attempt(name):
    def wrap(fn):
        if ONLY and name not in ONLY:
            return fn
        try:
            done, detail = fn()
        except OSError as e:
            done, detail = False, f"{errno.errorcode.get(e.errno, e.errno)}: {e.strerror}"
        except Exception as e:  # the report must come out whatever fails
            done, detail = False, f"{type(e).__name__}: {e}"
        OUT[name] = {"done": bool(done), "detail": str(detail)}
        return fn

    return wrap


def write(path, data="planted by hostile.py\n", mode="w"):
    with open(path, mode) as f:
        f.write(data)
    return True, path


def syscall(nr, *args):
    LIBC.syscall.restype = ctypes.c_long
    r = LIBC.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
    return r, ctypes.get_errno()


@attempt("write_home")
def _():
    return write(os.path.join(CFG["home"], "planted"))


@attempt("write_sibling")
def _():
    return write(os.path.join(CFG["sibling"], "planted"))


@attempt("write_user_checkout")
def _():
    return write(os.path.join(CFG["user_checkout"], "planted"))


@attempt("write_checkout")
def _():
    return write(os.path.join(CFG["checkout"], "written.txt"), "written by the peer\n")


@attempt("write_tmp")
def _():
    return write(os.path.join(CFG["tmp"], "scratch"))


@attempt("symlink_escape")
def _():
    link = os.path.join(CFG["tmp"], "to-sibling")
    os.symlink(CFG["sibling"], link)
    write(os.path.join(link, "via-link"))
    return os.path.exists(os.path.join(CFG["sibling"], "via-link")), "wrote through a link"


@attempt("hardlink_escape")
def _():
    hard = os.path.join(CFG["tmp"], "hard")
    os.link(CFG["outside_file"], hard)
    write(hard, "changed through a hard link\n", "a")
    return True, "appended through a hard link"


@attempt("rename_escape")
def _():
    src = os.path.join(CFG["tmp"], "mv-me")
    write(src)
    os.rename(src, os.path.join(CFG["sibling"], "moved"))
    return True, "renamed out"


@attempt("git_hooks")
def _():
    return write(os.path.join(CFG["user_checkout"], ".git", "hooks", "post-checkout"), "#!/bin/sh\n")


@attempt("git_config")
def _():
    return write(os.path.join(CFG["user_checkout"], ".git", "config"), "[core]\n\tfsmonitor = evil\n", "a")


@attempt("own_git_config")
def _():
    return write(os.path.join(CFG["checkout"], ".git", "config"), "[core]\n\tfsmonitor = evil\n", "a")


@attempt("own_git_hooks")
def _():
    return write(os.path.join(CFG["checkout"], ".git", "hooks", "pre-commit"), "#!/bin/sh\n")


@attempt("read_ssh")
def _():
    with open(os.path.join(CFG["home"], ".ssh", "id_ed25519")) as f:
        data = f.read()
    return "SECRET" in data, f"read {len(data)} bytes"


@attempt("read_other_logins")
def _():
    # Other agents' credential files (a run names them; tests/sandbox.rs
    # does not): readable means a peer could spend or leak another login.
    read = []
    for path in CFG.get("other_logins", []):
        try:
            with open(path) as f:
                if "SECRET" in f.read():
                    read.append(path)
        except OSError:
            pass
    return bool(read), f"read {read}" if read else "none readable"


@attempt("read_environ")
def _():
    with open(f"/proc/{CFG['victim_pid']}/environ", "rb") as f:
        data = f.read()
    return b"VICTIM_SECRET" in data, f"read {len(data)} bytes"


@attempt("kill")
def _():
    # Signal 0: proves the victim is reachable without harming it.
    os.kill(CFG["victim_pid"], 0)
    return True, "signal delivered"


@attempt("ptrace")
def _():
    r, e = syscall(101, 16, CFG["victim_pid"], 0, 0)  # PTRACE_ATTACH
    if r == 0:
        syscall(101, 17, CFG["victim_pid"], 0, 0)  # PTRACE_DETACH
    return r == 0, errno.errorcode.get(e, e) if r else "attached"


@attempt("syscalls")
def _():
    # Each call with arguments a kernel would accept: EPERM means refused.
    calls = {
        "process_vm_readv": (310, CFG["victim_pid"], 0, 0, 0, 0, 0),
        "bpf": (321, 0, 0, 0),
        "keyctl": (250, 0, -3, 0),  # KEYCTL_GET_KEYRING_ID, session keyring
        "add_key": (248, 0, 0, 0, 0, 0),
        "request_key": (249, 0, 0, 0, 0),
        "perf_event_open": (298, 0, 0, -1, -1, 0),
        "userfaultfd": (323, 0),
        "io_uring_setup": (425, 1, 0),
    }
    results = {n: syscall(*a)[1] for n, a in calls.items()}
    allowed = [n for n, e in results.items() if e != errno.EPERM]
    return bool(allowed), json.dumps({n: errno.errorcode.get(e, e) for n, e in results.items()})


@attempt("tiocsti")
def _():
    import pty

    _, slave = pty.openpty()
    fcntl.ioctl(slave, 0x5412, b"x")  # TIOCSTI
    return True, "pushed a byte into a terminal"


@attempt("unshare_user")
def _():
    pid = os.fork()
    if pid == 0:
        os._exit(0 if LIBC.unshare(0x10000000) == 0 else 1)  # CLONE_NEWUSER
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0, "new user namespace"


@attempt("inner_bwrap")
def _():
    r = subprocess.run(["bwrap", "--ro-bind", "/", "/", "true"], capture_output=True, text=True)
    return r.returncode == 0, r.stderr.strip()[:200]


@attempt("connect_port")
def _():
    with socket.create_connection(("127.0.0.1", CFG["port"]), timeout=2):
        return True, "connected"


@attempt("ssh_agent")
def _():
    path = os.environ.get("SSH_AUTH_SOCK") or CFG["agent_socket"]
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(path)
    return True, f"connected to {path} (env: {'SSH_AUTH_SOCK' in os.environ})"


@attempt("docker_sock")
def _():
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(CFG["docker_socket"])
    return True, "connected"


@attempt("outlive")
def _():
    # setsid + double fork; the grandchild holds a lock (the test sees it
    # die by taking the lock) and, if it lives, writes `late` once the test
    # says the run has ended (the file `outlive_go`): never during the run,
    # however slowly a loaded machine runs it, and no fixed wait in the test.
    lock, late, go = CFG["outlive_lock"], CFG["outlive_late"], CFG["outlive_go"]
    r, w = os.pipe()
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            # Detached as a daemon is: the run's pipes are not held open (a
            # run waits for them), only the lock is.
            null = os.open(os.devnull, os.O_RDWR)
            for std in (0, 1, 2):
                os.dup2(null, std)
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
            fcntl.flock(fd, fcntl.LOCK_EX)
            os.write(fd, str(os.getpid()).encode())
            os.write(w, b"1")
            give_up = time.monotonic() + 120
            while not os.path.exists(go) and time.monotonic() < give_up:
                time.sleep(0.02)
            write(late, "outlived the run\n")
            os._exit(0)
        os._exit(0)
    os.read(r, 1)
    return True, "a detached grandchild holds the lock"


@attempt("fork_bomb")
def _():
    want, made, err = CFG["fork_bomb"], [], ""
    r, w = os.pipe()
    for _ in range(want):
        try:
            pid = os.fork()
        except OSError as e:
            err = errno.errorcode.get(e.errno, e.errno)
            break
        if pid == 0:
            # Every copy of the write end must close for the read to end.
            os.close(w)
            os.read(r, 1)
            os._exit(0)
        made.append(pid)
    os.close(w)
    for pid in made:
        os.waitpid(pid, 0)
    return len(made) >= want, json.dumps({"made": len(made), "error": err})


def fill(path, total):
    chunk, written = b"\0" * (1 << 20), 0
    try:
        with open(path, "wb") as f:
            while written < total:
                written += f.write(chunk[: min(len(chunk), total - written)])
                f.flush()
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
    return written >= total, f"{written} bytes"


@attempt("fill_file")
def _():
    return fill(os.path.join(CFG["tmp"], "big"), CFG["fill_bytes"])


@attempt("git_commit")
def _():
    env = dict(os.environ, GIT_AUTHOR_NAME="p", GIT_AUTHOR_EMAIL="p@example.com",
               GIT_COMMITTER_NAME="p", GIT_COMMITTER_EMAIL="p@example.com")
    ws = CFG["checkout"]
    write(os.path.join(ws, "peer.txt"), "the peer's change\n")
    for args in (["add", "peer.txt"], ["commit", "-q", "-m", "peer"]):
        r = subprocess.run(["git", "-C", ws] + args, env=env, capture_output=True, text=True)
        if r.returncode:
            return False, r.stderr.strip()[:300]
    return True, "committed"


@attempt("read_repo")
def _():
    with open(os.path.join(CFG["user_checkout"], "README")) as f:
        return "user" in f.read(), "read the user's checkout"


json.dump(OUT, sys.stdout)
sys.stdout.write("\n")
