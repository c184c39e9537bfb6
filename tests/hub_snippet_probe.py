"""Run with the hub's Python: load hub/jupyterhub_config.d/attention-notebooks.py as The Littlest
JupyterHub and Zero to JupyterHub load it, and print (JSON) what a student's server gets.

- TLJH (tljh/jupyterhub_config.py): `load_subconfig(ec)` for each jupyterhub_config.d/*.py, with
  SystemdSpawner's `username_template = "jupyter-{USERNAME}"` (tljh/configurer.py).
- Zero to JupyterHub (jupyterhub/files/hub/jupyterhub_config.py): `exec(config_py)` of each
  hub.extraConfig entry in that file's globals, where `c` is the configuration and `get_config` is
  the chart's own getter, which takes a key (z2jh.py); the student is not a user of the hub's pod.

argv: the snippet, a folder to write TLJH's stand-in config file into, a Unix user name that
exists here (TLJH's jupyter-<name> stands for it).
"""

import json
import pwd
import sys
from pathlib import Path
from types import SimpleNamespace

from jupyterhub.app import JupyterHub
from jupyterhub.spawner import LocalProcessSpawner
from traitlets import Unicode
from traitlets.config import Config

snippet, folder, unix_user = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]


class SystemdLike(LocalProcessSpawner):   # the one trait of SystemdSpawner the snippet reads
    username_template = Unicode("{USERNAME}").tag(config=True)


def server(spawner, config) -> dict:
    return {"pythonpath": spawner.environment["PYTHONPATH"](spawner), "args": list(spawner.args),
            "default_url": spawner.default_url, "start_timeout": spawner.start_timeout,
            "http_timeout": spawner.http_timeout,
            "implicit_spawn_seconds": config.JupyterHub.implicit_spawn_seconds}


out = {}
tljh = folder / "jupyterhub_config.py"
tljh.write_text('c.SystemdLike.username_template = "jupyter-{USERNAME}"\n'
                f"load_subconfig({str(snippet)!r})\n")
app = JupyterHub()
app.load_config_file(str(tljh))
real = pwd.getpwnam
pwd.getpwnam = lambda name: real(unix_user) if name == "jupyter-ada" else real(name)
try:
    spawner = SystemdLike(config=app.config, user=SimpleNamespace(name="ada", id=7))
    out["tljh"] = server(spawner, app.config)
finally:
    pwd.getpwnam = real

c = Config()


def chart_get_config(key, default=None):   # z2jh.get_config: a value of the chart's config.yaml
    return default


exec(compile(snippet.read_text(), "hub.extraConfig.attention-notebooks", "exec"),
     {"c": c, "get_config": chart_get_config})
spawner = LocalProcessSpawner(config=c, user=SimpleNamespace(name="ada-not-a-unix-user", id=8))
out["z2jh"] = server(spawner, c)
print(json.dumps(out))
