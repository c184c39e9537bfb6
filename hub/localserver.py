"""A server process of our own on 127.0.0.1: free port, start, wait until it answers, stop, log.

`serving(folder)` serves a folder of static files in a thread of the caller's own process (the
static edition, for its tests and its benchmark).

One class for the three servers the repository starts: the class's JupyterHub (hubctl.Hub, also
started by tests/test_hub.py and scripts/bench.py), and the tests' JupyterLab
(tests/browser_helpers.py) and Voila (tests/test_present.py). A subclass says what to run
(`command`, `cwd`, `environ`), when it answers (`answers`) and how its log says that its port was
taken (`port_taken`); this class does the rest:

- the port: a free one (bind port 0, close), or the one it is given;
- start: the process in a session of its own (its process group), its output appended to
  `log_path`; if it exits because another process took the port meanwhile (found free is not
  kept free: a second pytest-xdist worker may bind it first), again on a new free port, up to
  `port_attempts` times; otherwise it polls `answers()` until it is true (a state, never a fixed
  time), and fails with the log's tail if the process exits or does not answer in `start_s`;
- die with the parent (`die_with_parent`, Linux): the server gets SIGTERM when the process that
  started it dies (a test run killed by a timeout leaves no server and kernels behind);
- stop: SIGTERM to the server (a Jupyter server then shuts its kernels down, a hub its students'
  servers), and SIGKILL to its process group if it is still there after `stop_s` seconds.

It lives in hub/ because hubctl.py must run without the course or any venv: `sudo python3 dev.py
hub` runs `python3 hub/hubctl.py` with the system's Python, which finds this file beside it. The
tests and the benchmark put hub/ on sys.path as they do for hubctl. Standard library only.
"""

from __future__ import annotations

import contextlib
import functools
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

START_S = 120       # upper bounds only: start() returns as soon as the server answers
PORT_ATTEMPTS = 5


def ephemeral_ports(path: str = "/proc/sys/net/ipv4/ip_local_port_range") -> range:
    """The ports the kernel hands out for a bind to port 0 (Linux's default: 32768-60999)."""
    try:
        low, high = (int(x) for x in Path(path).read_text().split())
    except (OSError, ValueError):
        low, high = 32768, 60999
    return range(low, high + 1)


def free_port_outside_ephemeral(avoid=(), low: int = 20000) -> int:
    """A free port on 127.0.0.1 below the ephemeral range and not in `avoid`.

    A port found free with a bind to port 0 (jupyterhub's random_port) lies in the ephemeral
    range, where every kernel's ZeroMQ sockets and every outgoing connection get theirs: in the
    minute before the server binds it, one of them may take it (jupyterhub/jupyterhub#3005).
    Below that range only a process that names its port binds; `avoid` holds the ports that this
    hub has handed out already. The range is [low, start of the ephemeral range)."""
    top = ephemeral_ports().start
    if top <= low:
        raise RuntimeError(f"no ports between {low} and the ephemeral range ({top}-): lower `low` "
                           "or raise net.ipv4.ip_local_port_range")
    avoid = set(avoid)
    candidates = [p for p in range(low, top) if p not in avoid]
    random.shuffle(candidates)
    for port in candidates[:200]:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port between {low} and {top - 1} after 200 tries")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # the base class's name: no line per request
        pass


@contextlib.contextmanager
def serving(folder):
    """Serve `folder` on 127.0.0.1 at a free port, in a thread; yield its URL (ending in /);
    stop the server when the block ends."""
    server = ThreadingHTTPServer(("127.0.0.1", 0),
                                 functools.partial(_QuietHandler, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def _parent_death_signal():
    """prctl, looked up here in the parent: the forked child must not import or dlopen.

    A pytest-xdist worker has threads (execnet's); after fork only the forking thread
    exists, and an import or dlopen lock held by another one would hang the child.
    """
    if not sys.platform.startswith("linux"):
        return None
    import ctypes
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    return lambda: prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


# In the server's process: get SIGTERM when its parent dies. Linux only.
die_with_parent = _parent_death_signal()


def stop_process(proc: subprocess.Popen, timeout: float = 30, kill_wait: float = 30) -> None:
    """SIGTERM, and SIGKILL to its process group (start_new_session made it the group's leader)
    if it is still there after `timeout` seconds."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=kill_wait)


class LocalServer:
    """A server process on 127.0.0.1 (see the module's docstring); subclasses say what it runs."""

    name = "the server"          # in error messages: "<name> exited with 1: <log>"
    no_log = "(no server log)"
    log_lines = 40
    log_mode = "a"               # "a": a retry on another port keeps what the earlier ones logged
    start_s = START_S
    port_attempts = PORT_ATTEMPTS
    stop_s = 30
    die_with_parent = True

    def __init__(self, log_path: Path, port: int | None = None):
        self.log_path = log_path
        self.proc: subprocess.Popen | None = None
        self._log = None
        self.set_port(port or free_port())

    def set_port(self, port: int) -> None:
        self.port = port
        self.base = f"http://127.0.0.1:{port}"

    # What a subclass says ---------------------------------------------------------------------

    def command(self) -> list[str]:
        raise NotImplementedError

    def cwd(self) -> Path | None:
        return None

    def environ(self) -> dict:
        return dict(os.environ)

    def answers(self) -> bool:
        """True once the server serves; may raise OSError (urllib's errors) while it starts."""
        raise NotImplementedError

    def popen_kwargs(self) -> dict:
        """More of subprocess.Popen's arguments (e.g. user= and group= to run as another user)."""
        return {}

    def port_taken(self, log: str) -> bool:
        """The log's tail of a server that exited says another process had its port."""
        return False

    # What it does -----------------------------------------------------------------------------

    def start(self) -> None:
        for attempt in range(self.port_attempts):
            if attempt:
                self.set_port(free_port())
            if self._start_on_port():
                return
        raise RuntimeError(f"{self.name} found no free port in {self.port_attempts} attempts:\n"
                           + self.log_tail())

    def _start_on_port(self) -> bool:
        """False if the port was taken; True once the server answers; raises otherwise."""
        self._log = open(self.log_path, self.log_mode, encoding="utf-8")  # closed in stop()
        self.proc = subprocess.Popen(
            self.command(), cwd=self.cwd(), env=self.environ(), stdin=subprocess.DEVNULL,
            stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True,
            preexec_fn=die_with_parent if self.die_with_parent else None, **self.popen_kwargs())
        deadline = time.monotonic() + self.start_s
        while True:
            if self.proc.poll() is not None:
                self._close_log()
                if self.port_taken(self.log_tail()):
                    return False
                raise RuntimeError(f"{self.name} exited with {self.proc.returncode}:\n"
                                   + self.log_tail())
            try:
                if self.answers():
                    return True
            except OSError:  # urllib.error.URLError, ConnectionError, TimeoutError: not yet
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name} did not answer within {self.start_s} s:\n"
                                   + self.log_tail())
            time.sleep(0.2)  # still starting: poll again (state-based wait)

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc, timeout=self.stop_s)
        self._close_log()

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None

    def log_tail(self, n: int | None = None) -> str:
        try:
            lines = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return self.no_log
        return "\n".join(lines[-(n or self.log_lines):])
