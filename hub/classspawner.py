"""The class hub's spawner: sudospawner, with each student's server on a port no kernel can take.

sudospawner 1.0 gives each server `jupyterhub.utils.random_port()`: a bind to port 0, closed at
once, so a port of the ephemeral range, the same range every kernel's ZeroMQ sockets and every
outgoing connection get theirs from. The server binds it up to a minute later; with 30 students
starting at once, something else had taken it (jupyterhub/jupyterhub#3005), answered the hub's
check, and the student's link gave 404 (hub/README.md, "How many students one machine serves").

ClassSudoSpawner picks the port below the ephemeral range instead, where only a process that
names its port binds, and never one that this hub gave to another server that is still running
or starting (the hub's database, and the spawns in flight, which are not in it yet). Loaded by
jupyterhub_config.py; needs the hub's venv (sudospawner).
"""

from __future__ import annotations

from jupyterhub import orm
from sudospawner import SudoSpawner

from localserver import free_port_outside_ephemeral


class ClassSudoSpawner(SudoSpawner):
    # the ports this hub handed out, from start() until the server stops: the database records a
    # server's port only after start() has returned, and only the server's bind makes it taken
    _handed_out: set[int] = set()

    def _ports_in_use(self) -> set[int]:
        recorded = {port for (port,) in self.db.query(orm.Server.port) if port}
        return recorded | self._handed_out

    async def start(self):
        # sudospawner's start(), with the port chosen as above
        self.port = free_port_outside_ephemeral(avoid=self._ports_in_use())
        self._handed_out.add(self.port)
        try:
            reply = await self.do(action="spawn", args=self.get_args(), env=self.get_env())
        except BaseException:
            self._handed_out.discard(self.port)
            raise
        self.pid = reply["pid"]
        return (self.ip or "127.0.0.1", self.port)

    async def stop(self, now=False):
        await super().stop(now=now)
        self._handed_out.discard(self.port)
