"""The real aklocd reading a real gpsd (gpsfake replaying a capture from
Tests/Fixtures/gpsd-logs), each on a free port and a private socket, for the
tests that talk to a live daemon. Everything started is stopped by pid, and
gpsd's SysV shared memory segment is removed (DESIGN §6).

``AKLOC_BIN_DIR`` names the directory holding the built ``aklocd`` (the
Makefile sets it). With ``AKLOC_REQUIRE_TOOLS=1`` (make test, CI) a missing
tool fails the test instead of skipping it."""

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import unittest
from typing import BinaryIO, List, Optional

REPOSITORY = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
LOGS = os.path.join(REPOSITORY, "Tests", "Fixtures", "gpsd-logs")
# The geo data of the tree (data/), for the places and countries ops.
DATA = os.path.join(REPOSITORY, "data")


def _which(name: str) -> Optional[str]:
    return shutil.which(name) or next(
        (path for path in (f"/usr/sbin/{name}", f"/sbin/{name}") if os.access(path, os.X_OK)), None
    )


def require_tools(case: unittest.TestCase) -> str:
    """The aklocd path; skips (or, when tools are required, fails) without gpsd's tools or aklocd."""
    missing = [name for name in ("gpsfake", "gpsd") if _which(name) is None]
    aklocd = os.path.join(os.environ.get("AKLOC_BIN_DIR", os.path.join(REPOSITORY, ".build", "debug")), "aklocd")
    if not os.access(aklocd, os.X_OK):
        missing.append(aklocd)
    if missing:
        message = f"missing {', '.join(missing)} (apt install gpsd gpsd-clients; swift build)"
        if os.environ.get("AKLOC_REQUIRE_TOOLS") == "1":
            case.fail(message)
        case.skipTest(message)
    return aklocd


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait(predicate, timeout: float, what: str, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        if process.poll() is not None:
            raise RuntimeError(f"{what}: exited with {process.returncode}")
        time.sleep(0.01)
    raise RuntimeError(f"{what}: not ready within {timeout} s")


def _connects(family: int, address) -> bool:
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(address)
            return True
        except OSError:
            return False


def _kill_group(process: subprocess.Popen) -> None:
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    process.wait(timeout=10)


class Replay:
    """gpsfake replaying ``log`` at ``cycle`` s per sentence, and aklocd
    reading it with the tree's geo data."""

    def __init__(self, aklocd: str, log: str, cycle: float, config: str = "") -> None:
        self.config = config  # aklocd's config file's text (empty: the defaults and the tree's data)
        self.directory = tempfile.mkdtemp(prefix="akloc-python-")
        os.chmod(self.directory, 0o755)
        self.socket = os.path.join(self.directory, "akloc.sock")
        self.aklocd = aklocd
        self.port = free_port()
        self.processes: List[subprocess.Popen] = []
        self.daemon_log: Optional[BinaryIO] = None
        gpsfake_tmp = os.path.join(self.directory, "gpsfake")
        os.mkdir(gpsfake_tmp)
        # Own process groups, so gpsfake's gpsd goes with it.
        self.gpsfake = subprocess.Popen(
            ["gpsfake", "-1", "-p", "-q", "-c", str(cycle), "-P", str(self.port), os.path.join(LOGS, log + ".log")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=dict(os.environ, TMPDIR=gpsfake_tmp),
            start_new_session=True,
        )
        try:
            _wait(lambda: _connects(socket.AF_INET, ("127.0.0.1", self.port)), 15, "gpsfake", self.gpsfake)
            self.daemon = self._start_daemon()
        except BaseException:
            self.stop()
            raise

    def _start_daemon(self) -> subprocess.Popen:
        config = os.path.join(self.directory, "akloc.conf")
        with open(config, "w") as file:
            # The tree's geo data, unless the test's own config says otherwise.
            if "[geo]" not in self.config:
                file.write(f"[geo]\ndata-dir = {DATA}\n")
            file.write(self.config)
        # One handle for the replay: a restarted daemon appends to the same log.
        if self.daemon_log is None:
            self.daemon_log = open(os.path.join(self.directory, "aklocd.log"), "ab")
        process = subprocess.Popen(
            [
                self.aklocd,
                "--socket", self.socket,
                "--gpsd", f"127.0.0.1:{self.port}",
                "--state-dir", os.path.join(self.directory, "state"),
                "--config", config,
            ],
            stdout=self.daemon_log,
            stderr=self.daemon_log,
            start_new_session=True,
        )
        self.processes.append(process)
        _wait(lambda: _connects(socket.AF_UNIX, self.socket), 15, "aklocd", process)
        return process

    def restart_daemon(self) -> None:
        """SIGKILLs aklocd and starts it again on the same socket."""
        _kill_group(self.daemon)
        self.daemon = self._start_daemon()

    def stop(self) -> None:
        for process in self.processes:
            _kill_group(process)
        _kill_group(self.gpsfake)
        _remove_gpsd_segment(self.port)
        if self.daemon_log is not None:
            self.daemon_log.close()
            self.daemon_log = None
        shutil.rmtree(self.directory, ignore_errors=True)


def _segments() -> List[List[str]]:
    """The rows of /proc/sysvipc/shm: key, shmid, perms, size, cpid, lpid, nattch, ..."""
    try:
        with open("/proc/sysvipc/shm") as table:
            return [row for row in (line.split() for line in table.readlines()[1:]) if len(row) > 6]
    except OSError:
        return []


def _remove_gpsd_segment(port: int) -> None:
    """gpsd 3.22 leaves a SysV segment keyed 0x4770PPPP behind, and as root its NTP ones (units 0-15).
    The port's is this replay's own, and only this replay's gpsd attaches it: once nothing is
    attached to it (bounded; a SIGKILLed gpsd exits at once, but nothing here waits for it, as
    gpsfake is the group's leader), that gpsd has left the NTP ones too, so they are not kept
    for a gpsd that is only still exiting. The NTP ones are shared by every gpsd run as root:
    removed only when nothing is attached (a parallel test's live gpsd keeps its own)."""
    own = 0x47700000 | port
    keys = {own}
    if os.geteuid() == 0:
        keys |= {0x4E545030 + n for n in range(16)}
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(
        int(row[0]) & 0xFFFFFFFF == own and row[6] != "0" for row in _segments()
    ):
        time.sleep(0.02)
    for row in _segments():
        key = int(row[0]) & 0xFFFFFFFF
        if key in keys and (key == own or row[6] == "0"):
            subprocess.run(["ipcrm", "-m", row[1]], check=False, stderr=subprocess.DEVNULL)
