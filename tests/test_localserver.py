"""hub/localserver.py, the server process of the hub, the browser test and the presentation test:
a port someone else took is retried on another, a server that does not start says why, stop ends it.

The server here is Python's own http.server: a second or so for the whole file.
"""

import socket
import sys
import urllib.request
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hub"))
import localserver  # noqa: E402
from localserver import LocalServer, serving  # noqa: E402


class HttpServer(LocalServer):
    name = "http.server"

    def command(self) -> list[str]:
        return [sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(self.port)]

    def cwd(self) -> Path:
        return self.log_path.parent

    def answers(self) -> bool:
        with urllib.request.urlopen(f"{self.base}/", timeout=5) as resp:
            return resp.status == 200

    def port_taken(self, log: str) -> bool:
        return "Address already in use" in log


def test_a_taken_port_is_retried_on_another_and_stop_ends_the_server(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        server = HttpServer(tmp_path / "server.log", port=taken.getsockname()[1])
        try:
            server.start()
            assert server.port != taken.getsockname()[1]
            assert "Address already in use" in server.log_tail()  # the first attempt's, kept
            assert server.answers() and server.proc.poll() is None
        finally:
            server.stop()
    assert server.proc.poll() is not None


def test_no_free_port_and_a_server_that_exits_say_so_with_the_log(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        server = HttpServer(tmp_path / "server.log", port=taken.getsockname()[1])
        server.port_attempts = 1
        with pytest.raises(RuntimeError, match="(?s)found no free port in 1 attempts.*in use"):
            server.start()
    server = HttpServer(tmp_path / "other.log")
    server.command = lambda: [sys.executable, "-c", "print('no such server'); raise SystemExit(3)"]
    with pytest.raises(RuntimeError, match="(?s)http.server exited with 3:\nno such server"):
        server.start()


def test_serving_a_folder_on_localhost_and_stopping_it(tmp_path):
    (tmp_path / "page.html").write_text("<p>hello</p>", encoding="utf-8")
    with serving(tmp_path) as url:
        assert url.startswith("http://127.0.0.1:") and url.endswith("/")
        with urllib.request.urlopen(url + "page.html", timeout=5) as resp:
            assert resp.read() == b"<p>hello</p>"
    with pytest.raises(OSError):   # the server is stopped: nothing answers on its port
        urllib.request.urlopen(url + "page.html", timeout=5)


def test_a_students_port_is_free_below_the_ephemeral_range_and_not_one_handed_out(
        tmp_path, monkeypatch):
    ports = localserver.ephemeral_ports()
    assert len(ports) > 1000 and ports.start > 20000, ports   # this machine's range, as read
    fake = tmp_path / "range"
    fake.write_text("20010\t60999\n")
    read = localserver.ephemeral_ports
    monkeypatch.setattr(localserver, "ephemeral_ports", lambda: read(str(fake)))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 20003))
        seen = {localserver.free_port_outside_ephemeral(avoid={20000, 20001}) for _ in range(200)}
    # 20000-20009 lie below the fake range; 20000 and 20001 are handed out, 20003 is bound
    assert seen == {20002, *range(20004, 20010)}, seen
    fake.write_text("20000\t60999\n")
    with pytest.raises(RuntimeError, match="no ports between 20000 and the ephemeral range"):
        localserver.free_port_outside_ephemeral()
