"""The installed package against the real aklocd and a real gpsd replay."""

import asyncio
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

import akloc
import akloc.aio
from live import REPOSITORY, Replay, _which, require_tools

# humminbird-M37: a powerboat at 2-3 m/s near 44.435 N, 71.676 W, about one fix a second at 0.2 s per sentence.
BOAT = "humminbird-M37"


class LiveDaemonTests(unittest.TestCase):
    def setUp(self) -> None:
        self.aklocd = require_tools(self)

    def replay(self, log: str = BOAT, cycle: float = 0.2) -> Replay:
        replay = Replay(self.aklocd, log, cycle)
        self.addCleanup(replay.stop)
        return replay

    def test_watch_get_status_and_request_location(self) -> None:
        replay = self.replay()
        with akloc.Client(socket=replay.socket, timeout=10) as client:
            self.assertEqual(client.hello.protocol, 1)
            self.assertEqual(client.authorization_status, "authorizedAlways")
            self.assertIn(client.get("state"), ("searching", "running", "sourceUnavailable"))
            locations = []
            for location in client.watch(min_interval=1, timeout=30):
                locations.append(location)
                if len(locations) == 4:
                    break
            for location in locations:
                self.assertAlmostEqual(location.latitude, 44.435, delta=0.01)
                self.assertAlmostEqual(location.longitude, -71.676, delta=0.01)
                self.assertIn(location.mode, ("2d", "3d"))
                self.assertIsNotNone(location.received_at)
            # Throttled at one a second: the daemon's clock says so.
            gaps = [(b.received_at - a.received_at).total_seconds() for a, b in zip(locations, locations[1:])]
            self.assertTrue(all(gap >= 0.95 for gap in gaps), gaps)
            mine = client.get("myLocation")
            self.assertIsInstance(mine, akloc.Location)
            self.assertIsInstance(client.get("myLocation.speed"), float)
            fresh = client.request_location(timeout=5)
            self.assertAlmostEqual(fresh.latitude, 44.435, delta=0.01)
            status = client.status()
            self.assertEqual(status["state"], "running")
            self.assertGreater(status["counters"]["fixesReceived"], 0)
            with self.assertRaises(akloc.UnknownKeyPath) as raised:
                client.get("myLocation.sped")
            self.assertEqual(raised.exception.code, "unknownKeyPath")
            with self.assertRaises(akloc.BadRequest):
                client.request_location(timeout=-1)
            # The connection survives error replies.
            self.assertEqual(client.get("authorizationStatus"), "authorizedAlways")

    def test_throttled_events_carry_the_real_interval(self) -> None:
        replay = self.replay()
        with akloc.Client(socket=replay.socket, timeout=10) as client:
            client.request("startUpdatingLocation", policy=akloc._protocol.policy(min_interval=2))
            intervals = []
            for event in client.events(timeout=30):
                if event.name == "didUpdateLocation" and event.after_time_interval is not None:
                    intervals.append(event.after_time_interval)
                    if len(intervals) == 3:
                        break
        self.assertTrue(all(2 <= interval < 3.5 for interval in intervals), intervals)

    def test_the_first_location_error_without_a_fix(self) -> None:
        # A SiRF receiver that never gets a fix: after its attempts the daemon says so, and goes on.
        replay = self.replay(log="bu303-nofix", cycle=0.1)
        with akloc.Client(socket=replay.socket, timeout=10) as client:
            client.request("startUpdatingLocation")
            started = time.monotonic()
            for event in client.events(timeout=15):
                self.assertNotIn(event.name, ("didGetFirstLocation", "didUpdateLocation"))
                if event.name == "didGetError":
                    self.assertEqual(event.error, "locationManagerCantDetectFirstLocation")
                    break
            # Five attempts a second apart, the first at once.
            self.assertGreater(time.monotonic() - started, 3.5)
            with self.assertRaises(akloc.Timeout) as raised:
                client.request_location(timeout=1)
            self.assertEqual(raised.exception.code, "timeout")

    def test_observe_my_location(self) -> None:
        replay = self.replay()
        with akloc.Client(socket=replay.socket, timeout=10) as client:
            throttled = []
            for change in client.observe("myLocation", initial=False, min_interval=1, timeout=30):
                throttled.append(change)
                if len(throttled) == 2:
                    break
            locations = [change.new_location for change in throttled]
            self.assertTrue(all(abs(location.latitude - 44.435) < 0.01 for location in locations), locations)
            self.assertGreaterEqual((locations[1].received_at - locations[0].received_at).total_seconds(), 0.95)
            changes = []
            for change in client.observe("rawLocation.coordinate", initial=False, old=True, timeout=30):
                changes.append(change)
                if len(changes) == 3:
                    break
            self.assertEqual(set(changes[-1].new), {"latitude", "longitude"})
            self.assertTrue(changes[-1].has_old)
            self.assertEqual(changes[-1].old, changes[-2].new)
            # The generator's close sent unobserve; the client still works.
            self.assertEqual(client.status()["clients"]["observing"], 0)

    def test_asyncio_client(self) -> None:
        replay = self.replay()

        async def main() -> None:
            async with await akloc.aio.Client.connect(replay.socket, timeout=10) as client:
                self.assertEqual(client.authorization_status, "authorizedAlways")
                watch = client.watch(min_interval=1, timeout=30)
                first = await watch.__anext__()
                second = await watch.__anext__()
                await watch.aclose()
                self.assertAlmostEqual(first.latitude, 44.435, delta=0.01)
                self.assertGreaterEqual((second.received_at - first.received_at).total_seconds(), 0.95)
                status, state = await asyncio.gather(client.status(), client.get("state"))
                self.assertEqual(status["clients"]["updating"], 0)
                self.assertEqual(state, "running")
                fresh = await client.request_location(timeout=5)
                self.assertAlmostEqual(fresh.longitude, -71.676, delta=0.01)
                with self.assertRaises(akloc.UnknownOp):
                    await client.request("fly")

        asyncio.run(main())

    def test_watch_reconnects_when_aklocd_restarts(self) -> None:
        replay = self.replay(cycle=0.25)
        with akloc.Client(socket=replay.socket, timeout=10) as client:
            before, after = [], []
            restarted_at = None
            for location in client.watch(min_interval=1, timeout=30, reconnect=True):
                if restarted_at is None:
                    before.append(location)
                    if len(before) == 2:
                        replay.restart_daemon()
                        restarted_at = time.monotonic()
                else:
                    after.append(location)
                    if len(after) == 2:
                        break
            # Connected to the new daemon: it has been up for less time than since the restart.
            uptime = client.status()["uptimeSeconds"]
            self.assertLess(uptime, time.monotonic() - restarted_at + 0.5)
        self.assertGreater(after[-1].received_at, before[-1].received_at)

    def test_without_reconnect_a_restart_ends_the_watch_with_a_clear_error(self) -> None:
        replay = self.replay()
        with akloc.Client(socket=replay.socket, timeout=10) as client:
            restarted = False
            with self.assertRaises(akloc.ConnectionLost) as raised:
                for _ in client.watch(min_interval=1, timeout=30):
                    if not restarted:
                        replay.restart_daemon()
                        restarted = True
            self.assertIn("closed the connection", raised.exception.message)

    def test_authorization_as_a_user_without_a_rule(self) -> None:
        """A real user (made with useradd, removed after): notDetermined, so
        watch and a lookup of the current fix fail with NotAuthorized until it
        asks (a lookup of a given point needs none); then the daemon's
        default answers with the notifications of docs/protocol.md §6."""
        if os.geteuid() != 0 or _which("useradd") is None or _which("setpriv") is None:
            message = "needs root with useradd and setpriv"
            if os.environ.get("AKLOC_REQUIRE_TOOLS") == "1":
                self.fail(message)
            self.skipTest(message)
        replay = self.replay()
        name = f"akpy-{os.getpid() % 100000}"
        # A leftover of an interrupted run has this test's prefix; it goes first.
        subprocess.run(["userdel", name], check=False, stderr=subprocess.DEVNULL)
        subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", name], check=True)
        self.addCleanup(subprocess.run, ["userdel", name], check=False)
        uid = int(subprocess.run(["id", "-u", name], capture_output=True, text=True, check=True).stdout)
        gid = int(subprocess.run(["id", "-g", name], capture_output=True, text=True, check=True).stdout)
        script = """
import akloc
with akloc.Client(timeout=10) as client:
    print("hello", client.authorization_status)
    try:
        next(client.watch(min_interval=1))
    except akloc.NotAuthorized as error:
        print("refused", error.code)
    try:
        client.reverse_geocode()
    except akloc.NotAuthorized as error:
        print("geo refused", error.code)
    print("geo", client.reverse_geocode(52.72, 5.33)["isoCountryCode"])
    print("granted", client.request_authorization("whenInUse"))
    for event in client.events(timeout=10):
        if event.name == "didGetNotification":
            print("notification", event.notification)
        if event.notification == "authorizedWhenInUse":
            break
    location = next(client.watch(min_interval=1, timeout=30))
    print("location", round(location.latitude, 3))
"""
        # The user may not reach the checkout or the venv (a clone under a
        # 0700 directory, root's home): it gets the installed package copied
        # to a directory of its own and the venv's base interpreter.
        reachable = tempfile.mkdtemp(prefix="akpy-")
        self.addCleanup(shutil.rmtree, reachable, True)
        os.chmod(reachable, 0o755)
        shutil.copytree(os.path.dirname(akloc.__file__), os.path.join(reachable, "akloc"))
        subprocess.run(["chmod", "-R", "a+rX", reachable], check=True)
        interpreter = os.path.realpath(sys.executable)
        run = subprocess.run(
            ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", interpreter, "-c", script],
            env=dict(os.environ, AKLOC_SOCKET=replay.socket, PYTHONPATH=reachable),
            cwd=reachable,
            capture_output=True,
            text=True,
            timeout=60,
        )
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(
            run.stdout.splitlines(),
            [
                "hello notDetermined",
                "refused notAuthorized",
                "geo refused notAuthorized",
                "geo NL",
                "granted authorizedWhenInUse",
                "notification locationManagerNotAuthorized",
                "notification userAuthorizedWhenInUse",
                "notification authorizedWhenInUse",
                "location 44.435",
            ],
        )

    def test_monitor_visits_gets_the_arrival_then_the_departure_as_the_history_has_them(self) -> None:
        # bundg_zeus_9, a boat at about 3 m/s, at its own pace: with a 50 m
        # radius and 10 s its first 16 s are a visit, the way on beyond
        # 100 m the departure (docs/timeline.md).
        replay = Replay(self.aklocd, "bundg_zeus_9", 0.03, "[timeline]\nradius = 50\nmin-time = 10\n")
        self.addCleanup(replay.stop)
        with akloc.Client(socket=replay.socket, timeout=10) as client:
            visits = client.monitor_visits(timeout=120)
            arrival, departure = next(visits), next(visits)
            visits.close()
            self.assertIsNone(arrival.departure)
            self.assertAlmostEqual(arrival.latitude, 52.85, delta=0.05)
            # Named where it is, with the tree's geo data (the IJsselmeer, off Enkhuizen).
            self.assertEqual((arrival.country or {}).get("code"), "NL", arrival)
            self.assertEqual((arrival.time_zone or {}).get("identifier"), "Europe/Amsterdam", arrival)
            self.assertEqual(departure.arrival, arrival.arrival, "the same visit")
            self.assertIsNotNone(departure.departure)
            self.assertLessEqual(departure.radius, 50)
            history = client.request("visits", since=time.time() - 3600)["visits"]
            first = akloc.Visit.from_json(history[0])
            self.assertEqual((first.arrival, first.departure), (arrival.arrival, departure.departure), history)

    def test_the_examples_in_docs_clients_md_run(self) -> None:
        replay = self.replay()
        with open(os.path.join(REPOSITORY, "docs", "clients.md")) as docs:
            examples = re.findall(r"```python\n(.*?)```", docs.read(), re.S)
        self.assertGreaterEqual(len(examples), 6)
        for example in examples:
            run = subprocess.run(
                [sys.executable, "-c", example],
                env=dict(os.environ, AKLOC_SOCKET=replay.socket),
                capture_output=True,
                text=True,
                timeout=60,
            )
            self.assertEqual(run.returncode, 0, f"{example}\n{run.stdout}\n{run.stderr}")
            self.assertRegex(run.stdout, r"44\.4\d+", example)
            if "delete_place" in example:
                self.assertIn("['Dock', 'Here']", run.stdout, example)
                self.assertIn("notFound", run.stdout, example)
            if "monitor(" in example:
                self.assertRegex(run.stdout, r"entered Mooring 44\.4\d+\nsegment \d+ 44\.4\d+ 20\d\d-", example)
            if "asyncio.gather" in example:
                self.assertRegex(run.stdout, r"^44\.4\d+ 44\.4\d+ running\n$", example)
            if "reverse_geocode" in example:
                # The boat's place, the search, all 25 NANP countries, the German name, the error's code.
                for line in ("America/New_York", "Enkhuizen", "25 countries share +1", "Deutschland +49", "badRequest"):
                    self.assertIn(line, run.stdout, example)


if __name__ == "__main__":
    unittest.main()
