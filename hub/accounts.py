"""The class hub's Unix accounts: its service user and sudoers rule, and a user per student.

    create_hub_user / remove_hub_user   the service user the hub runs as (an-hub-...), the
                                        class group (an-class-...) and the one sudoers rule that
                                        lets it start servers as the class's members
    create_student / remove_student     a student (an-student-...) or the class's teacher
                                        (an-teacher-...): home of mode 700, password
    new_password                        a student's password, printed once to the teacher
    limit_student_memory /              a student's own memory cgroup: all their server's
      remove_student_memory               processes together, under one limit (libcgroup)
    pids_of_uid, _stop_uid              every process of a user, and stopping them by pid
    listening_sockets                   the TCP ports a user's processes listen on

Every user and group made here carries a prefix and a comment of its own, and the remove_*
functions refuse any other. They need root. hubctl.py (the command line and the Hub server)
uses them for the trial hub; tests/test_hub.py and scripts/bench_hub.py for hubs of their own.
Standard library only, like hubctl.py.
"""

from __future__ import annotations

import contextlib
import grp
import os
import pwd
import secrets
import signal
import socket
import subprocess
import time
from pathlib import Path

STUDENT_PREFIX = "an-student-"          # every Unix user this file creates starts with it
STUDENT_COMMENT = "attention-notebooks hub student (removable)"
TEACHER_PREFIX = "an-teacher-"          # the class's teacher: a member of the class like a student
HUB_USER_PREFIX = "an-hub-"             # the service user the hub and its proxy run as
HUB_USER_COMMENT = "attention-notebooks hub service user (removable)"
CLASS_GROUP_PREFIX = "an-class-"        # the students' group: whom the hub may start servers as
SUDOERS_DIR = Path("/etc/sudoers.d")
# Each student's own memory cgroup (cgroup v1's memory controller): memory:<parent>/<student>.
# The parent is AN_HUB_STUDENT_CGROUP, the one setting jupyterhub_config.py reads too (and passes
# to sudospawner-singleuser, which starts the student's server in it); empty: no such limit.
CGROUP_PARENT = os.environ.get("AN_HUB_STUDENT_CGROUP", "attention-notebooks")
CGROUP_MEMORY = Path("/sys/fs/cgroup/memory")


def new_password() -> str:
    """A student's own password: 16 characters from a CSPRNG (printed once to the teacher)."""
    return secrets.token_urlsafe(12)


def create_hub_user(name: str, group: str, env: Path | None = None) -> pwd.struct_passwd:
    """The service user the hub runs as (`name`, must start with an-hub-), and the class.

    `group` (an-class-...) is the students' group; one sudoers rule lets the service user run
    the hub venv's sudospawner, and nothing else, as any member of it:
    /etc/sudoers.d/<name>, checked with visudo. The user is in the group shadow (PAM checks the
    students' passwords against /etc/shadow), has no home and no login shell.
    """
    if not name.startswith(HUB_USER_PREFIX) or not group.startswith(CLASS_GROUP_PREFIX):
        raise ValueError(f"the hub user starts with {HUB_USER_PREFIX!r}, the class group with "
                         f"{CLASS_GROUP_PREFIX!r}: {name!r}, {group!r}")
    if env is None:
        from hubenv import env_dir  # where the hub's venv is: hubenv decides (imported here:
        env = env_dir()             # hubenv imports this file)
    subprocess.run(["groupadd", group], check=True, capture_output=True, text=True)
    subprocess.run(["useradd", "--system", "--user-group", "--no-create-home", "--home-dir",
                    "/nonexistent", "--shell", "/usr/sbin/nologin", "--groups", "shadow",
                    "--comment", HUB_USER_COMMENT, name], check=True, capture_output=True, text=True)
    rule = (f"# attention-notebooks hub (hub/hubctl.py): {name} starts servers as the class\n"
            f"{name} ALL=(%{group}) NOPASSWD: {env / 'bin' / 'sudospawner'}\n")
    SUDOERS_DIR.mkdir(exist_ok=True)
    tmp = SUDOERS_DIR / f".{name}.tmp"   # sudo skips names with a dot
    tmp.write_text(rule)
    tmp.chmod(0o440)
    check = subprocess.run(["visudo", "-cqf", str(tmp)], capture_output=True, text=True)
    if check.returncode:
        tmp.unlink()
        raise RuntimeError(f"visudo rejects the rule {rule!r}: {check.stdout}{check.stderr}")
    tmp.rename(SUDOERS_DIR / name)
    return pwd.getpwnam(name)


def remove_hub_user(name: str, group: str) -> None:
    """The sudoers rule, the service user and the class group. Only ones this file created."""
    with contextlib.suppress(FileNotFoundError):
        (SUDOERS_DIR / name).unlink()
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        entry = None
    if entry is not None:
        if not name.startswith(HUB_USER_PREFIX) or entry.pw_gecos != HUB_USER_COMMENT:
            raise ValueError(f"refusing to remove {name!r}: not a user this file created")
        _stop_uid(entry.pw_uid)
        subprocess.run(["userdel", name], capture_output=True, text=True)
    if group.startswith(CLASS_GROUP_PREFIX):
        subprocess.run(["groupdel", group], capture_output=True, text=True)


def create_student(name: str, trust: list[Path] = (), group: str | None = None,
                   password: str | None = None, memory: int | None = None) -> Path:
    """A Unix user `name` (starts with an-student-, or an-teacher- for the class's teacher: a
    member of the class with a server of their own like every student) whose home only they can
    read.

    `group`: the class (create_hub_user's group), whose members the hub may start servers as;
    `password`: the student's Unix password (the hub's PAM login);
    `memory`: bytes for all their processes together (limit_student_memory), or no such limit.

    `trust`: local repositories (owned by root) the student may clone: git refuses a repository
    owned by another user ("dubious ownership") unless the student's ~/.gitconfig lists it.
    A course on a git host (https://...) needs none.
    """
    if not name.startswith((STUDENT_PREFIX, TEACHER_PREFIX)):
        raise ValueError(f"the class's users start with {STUDENT_PREFIX!r} or {TEACHER_PREFIX!r}: "
                         f"{name!r}")
    subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", "--comment",
                    STUDENT_COMMENT, *(["--groups", group] if group else []), name],
                   check=True, capture_output=True, text=True)
    if password is not None:
        subprocess.run(["chpasswd"], input=f"{name}:{password}\n", check=True,
                       capture_output=True, text=True)
    entry = pwd.getpwnam(name)
    home = Path(entry.pw_dir)
    home.chmod(0o700)  # Debian's useradd makes 755 homes: every student could read the others'
    if memory is not None:
        try:
            limit_student_memory(name, memory)
        except BaseException:  # no half-made student: the caller only removes what it got back
            with contextlib.suppress(Exception):  # a cgroup made before the failure, too: its
                remove_student_memory(name)        # tasks file would go to the next user of the uid
            subprocess.run(["userdel", "--remove", name], capture_output=True, text=True)
            raise
    if trust:
        gitconfig = home / ".gitconfig"
        gitconfig.write_text("[safe]\n" + "".join(f"\tdirectory = {p}\n" for p in trust))
        os.chown(gitconfig, entry.pw_uid, entry.pw_gid)
    return home


def memory_cgroup(name: str) -> Path:
    """The folder of `name`'s memory cgroup (it may not exist)."""
    return CGROUP_MEMORY / CGROUP_PARENT / name


def limit_student_memory(name: str, limit_bytes: int) -> Path:
    """A memory cgroup of the student's own, `limit_bytes` for all their processes together.

    Made (or its limit changed) with libcgroup's cgcreate and cgset (Debian package
    cgroup-tools). Root owns the cgroup and its limit; the student owns only its `tasks` file,
    so that sudospawner-singleuser, running as the student, can start their server in it (cgexec).
    Every kernel of that server is in it too. Beyond the limit the kernel's OOM killer stops the
    largest process of this cgroup (a kernel: the server itself is smaller), and no process of
    anyone else. The student cannot raise the limit or make a cgroup below it, and what the hub
    starts cannot leave it (every other cgroup's `tasks` is root's or another student's). What
    the student starts by another way in (cron, at, ssh) is not in it: hub/README.md, "Limits".
    Swap is counted too where the machine accounts it (memory.memsw); where it does not, the
    cgroup's swappiness is 0, so that its memory is not swapped out instead. A cgroup v1 folder
    lives until reboot: make it again after one (`sudo python3 dev.py hub --limit-memory ...`).
    """
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        raise ValueError(f"name={name!r}: no such Unix user") from None
    if entry.pw_uid == 0:
        raise ValueError(f"name={name!r}: root is no student")
    if limit_bytes < 64 * 2**20:
        raise ValueError(f"limit_bytes={limit_bytes}: a student's server needs far more than "
                         "64 MiB (about 335 MiB with a kernel)")
    if not CGROUP_MEMORY.is_dir():
        raise RuntimeError(f"{CGROUP_MEMORY} is not mounted: no cgroup v1 memory controller on "
                           "this machine (hub/README.md, 'Limits')")
    if not CGROUP_PARENT or "/" in CGROUP_PARENT or CGROUP_PARENT.startswith("."):
        raise ValueError(f"AN_HUB_STUDENT_CGROUP={CGROUP_PARENT!r}: give the name of a folder "
                         "(default attention-notebooks)")
    path = memory_cgroup(name)
    owner = f"{name}:{grp.getgrgid(entry.pw_gid).gr_name}"   # cgcreate takes names, not ids
    made = subprocess.run(["cgcreate", "-a", "root:root", "-t", owner, "-g",
                           f"memory:{CGROUP_PARENT}/{name}"], capture_output=True, text=True)
    # cgcreate 2.0 exits 0 even when it made nothing ("can't find uid of user ..."): look
    tasks = path / "tasks"
    if made.returncode or not tasks.exists() or tasks.stat().st_uid != entry.pw_uid \
            or path.stat().st_uid != 0 or path.parent.stat().st_uid != 0 \
            or (path / "memory.limit_in_bytes").stat().st_uid != 0:
        raise RuntimeError(f"cgcreate did not make {path} with its tasks file {name}'s and its "
                           f"limit root's: {made.stdout}{made.stderr}".strip())
    swap = path / "memory.memsw.limit_in_bytes"
    settings = [("memory.limit_in_bytes", limit_bytes)]
    if swap.exists():  # memsw >= limit: lower memsw last, raise it first
        now = int((path / "memory.limit_in_bytes").read_text())
        pair = [("memory.memsw.limit_in_bytes", limit_bytes), *settings]
        settings = pair if limit_bytes > now else [*settings, pair[0]]
    else:  # swap not accounted: keep this cgroup's memory out of swap rather than unbounded there
        settings.append(("memory.swappiness", 0))
    for key, value in settings:
        out = subprocess.run(["cgset", "-r", f"{key}={value}", f"{CGROUP_PARENT}/{name}"],
                             capture_output=True, text=True)
        got = int((path / key).read_text())
        if got != value:  # the kernel rounds to whole pages; a limit it refused stays as it was
            page = os.sysconf("SC_PAGE_SIZE")
            if out.returncode or got != value // page * page:
                raise RuntimeError(f"cgset could not set {key}={value} on {path} (it is {got}): "
                                   f"{out.stdout}{out.stderr}".strip())
    return path


def remove_student_memory(name: str) -> None:
    """The student's memory cgroup, once nothing runs in it (libcgroup's cgdelete); the parent
    too when no other student's is left."""
    if CGROUP_PARENT and memory_cgroup(name).exists():
        subprocess.run(["cgdelete", "-g", f"memory:{CGROUP_PARENT}/{name}"], check=True,
                       capture_output=True, text=True)
    with contextlib.suppress(OSError):  # another class's students are still in it
        (CGROUP_MEMORY / CGROUP_PARENT).rmdir()


def pids_of_uid(uid: int) -> list[int]:
    pids = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            for line in status.read_text().splitlines():
                if line.startswith("Uid:"):
                    if int(line.split()[1]) == uid:
                        pids.append(int(status.parent.name))
                    break
        except (OSError, ValueError):
            continue
    return pids


def _stop_uid(uid: int) -> None:
    """SIGTERM, then SIGKILL, to every process of `uid` (by pid), until none is left."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        pids = pids_of_uid(uid)
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + 10
        while pids_of_uid(uid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if not pids_of_uid(uid):
            break


def remove_student(name: str) -> None:
    """Stop what still runs as the student (by pid), then `userdel -r`. Only our users."""
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        return
    if not name.startswith((STUDENT_PREFIX, TEACHER_PREFIX)) or entry.pw_gecos != STUDENT_COMMENT:
        raise ValueError(f"refusing to remove {name!r}: not a user this file created")
    _stop_uid(entry.pw_uid)
    try:
        remove_student_memory(name)
    finally:  # the user goes even when the cgroup does not (a process left in it): said after
        subprocess.run(["userdel", "--remove", name], capture_output=True, text=True)
    with contextlib.suppress(KeyError):
        pwd.getpwnam(name)
        raise RuntimeError(f"userdel could not remove {name}")


def listening_sockets(pids: list[int]) -> list[tuple[int, str, int]]:
    """(pid, address, port) of every TCP socket in LISTEN state that one of `pids` holds."""
    listen = {}
    for table, v6 in (("/proc/net/tcp", False), ("/proc/net/tcp6", True)):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                if fields[3] != "0A":  # TCP_LISTEN
                    continue
                hex_addr, hex_port = fields[1].split(":")
                raw = bytes.fromhex(hex_addr)
                if v6:  # four little-endian 32-bit words
                    raw = b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))
                    addr = socket.inet_ntop(socket.AF_INET6, raw)
                else:
                    addr = socket.inet_ntop(socket.AF_INET, raw[::-1])
                listen[fields[9]] = (addr, int(hex_port, 16))
    found = []
    for pid in pids:
        with contextlib.suppress(OSError):
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                with contextlib.suppress(OSError):
                    target = os.readlink(fd)
                    if target.startswith("socket:[") and target[8:-1] in listen:
                        found.append((pid, *listen[target[8:-1]]))
    return found
