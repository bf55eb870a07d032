"""Iterators side by side on one client, the asyncio client's admin calls
and reconnect, the track and region monitoring: the installed package
against the real aklocd and a real gpsd replay."""

import asyncio
import time
import unittest
from typing import List

import akloc
import akloc.aio
from live import Replay, require_tools

# humminbird-M37: a powerboat at 2-3 m/s near 44.435 N, 71.676 W, about one fix a second at 0.2 s per sentence.
BOAT = "humminbird-M37"
# Every epoch, throttled or not: the watch and a rawLocation observation see the same ones.
EVERY_EPOCH = {"min_interval": 0, "max_interval": 0}


def epoch(location: akloc.Location) -> tuple:
    return (location.timestamp, location.latitude, location.longitude)


class LiveIteratorTests(unittest.TestCase):
    def setUp(self) -> None:
        self.aklocd = require_tools(self)
        self.replay = Replay(self.aklocd, BOAT, 0.2)
        self.addCleanup(self.replay.stop)

    def assert_same_epochs(self, watched: List[akloc.Location], observed: List[akloc.Location]) -> None:
        """Both streams saw the same epochs, each from its own start on: the
        one that started later is a run of the other, with no gap in either."""
        a, b = [epoch(x) for x in watched], [epoch(x) for x in observed]
        later, earlier = (a, b) if a[0] in b else (b, a)
        self.assertIn(later[0], earlier, f"no epoch in common: {a} {b}")
        earlier = earlier[earlier.index(later[0]) :]
        overlap = min(len(later), len(earlier))
        self.assertGreaterEqual(overlap, 6, (a, b))
        self.assertEqual(later[:overlap], earlier[:overlap])

    def test_watch_and_observe_on_one_client_each_get_every_epoch(self) -> None:
        with akloc.Client(socket=self.replay.socket, timeout=10) as client:
            observe = client.observe("rawLocation", initial=False, timeout=30)
            watch = client.watch(**EVERY_EPOCH, timeout=30)
            observed = [next(observe).new_location]
            watched: List[akloc.Location] = []
            # Unevenly, so neither iterator could get by with the other's leftovers.
            for _ in range(4):
                watched += [next(watch), next(watch)]
                observed.append(next(observe).new_location)
            observed += [next(observe).new_location for _ in range(len(watched) - len(observed) + 1)]
            watch.close()
            observe.close()
            counts = client.status()["clients"]
            self.assertEqual((counts["updating"], counts["observing"]), (0, 0))
        self.assert_same_epochs(watched, observed)

    def test_asyncio_watch_and_observe_in_two_tasks_each_get_every_epoch(self) -> None:
        async def take(iterator, wanted: int) -> list:
            got = []
            try:
                while len(got) < wanted:
                    got.append(await iterator.__anext__())
            finally:
                await iterator.aclose()
            return got

        async def main() -> tuple:
            async with akloc.aio.connect(self.replay.socket, timeout=10) as client:
                watched, observed = await asyncio.gather(
                    take(client.watch(**EVERY_EPOCH, timeout=30), 10),
                    take(client.observe("rawLocation", initial=False, timeout=30), 10),
                )
                counts = (await client.status())["clients"]
                self.assertEqual((counts["updating"], counts["observing"]), (0, 0))
                return watched, [change.new_location for change in observed]

        self.assert_same_epochs(*asyncio.run(main()))

    def test_asyncio_admin_calls_and_reconnect(self) -> None:
        async def main() -> None:
            async with akloc.aio.connect(self.replay.socket, timeout=10) as client:
                await client.configure(min_interval=1, max_interval=2)
                await client.pause()
                self.assertEqual(await client.get("state"), "paused")
                await client.resume()
                # Both came while no iterator was open: the first events() gets them.
                notifications = []
                events = client.events(timeout=10)
                async for event in events:
                    notifications.append(event.notification)
                    if event.notification == "resumed":
                        break
                await events.aclose()
                self.assertEqual([n for n in notifications if n in ("paused", "resumed")], ["paused", "resumed"])
                with self.assertRaises(akloc.BadRequest) as raised:
                    await client.authorize("-nobody", "always")
                self.assertIn("subject", raised.exception.message)

                watch = client.watch(timeout=30, reconnect=True)
                before = await watch.__anext__()
                self.replay.restart_daemon()
                restarted_at = time.monotonic()
                after = [await watch.__anext__(), await watch.__anext__()]
                # Connected to the new daemon: it has been up for less time than since the restart.
                self.assertLess((await client.status())["uptimeSeconds"], time.monotonic() - restarted_at + 0.5)
                await watch.aclose()
                self.assertGreater(after[0].received_at, before.received_at)
                self.assertEqual((await client.status())["clients"]["updating"], 0)

        asyncio.run(main())

    def test_track_pages_and_clear(self) -> None:
        with akloc.Client(socket=self.replay.socket, timeout=10) as client:
            watch = client.watch(**EVERY_EPOCH, timeout=30)
            watched = [next(watch) for _ in range(6)]
            watch.close()
            # Up to the epoch before the last one seen: the recorder has written those.
            since, until = watched[0].received_at, watched[-2].received_at
            points = list(client.track_points(since=since, until=until, page_size=1))
            self.assertGreaterEqual(len(points), 2, "a boat at 2-3 m/s gives a point every 5 m")
            for point in points:
                self.assertIn(epoch(point), [epoch(location) for location in watched])
                self.assertTrue(since <= point.received_at <= until, point)
                self.assertIsInstance(point.segment, int)
            page = client.track(since=since.timestamp(), until=until, limit=1)
            self.assertEqual(page.points, points[:1])
            self.assertIsNotNone(page.next)
            with self.assertRaises(akloc.BadRequest) as raised:
                client.track(since="tomorrow")
            self.assertIn('"since"', raised.exception.message)
            client.clear_track()
            self.assertEqual(client.track(since=since, until=until).points, [])

    def test_monitor_a_place_at_the_boat(self) -> None:
        with akloc.Client(socket=self.replay.socket, timeout=10) as client:
            here = client.request_location(timeout=10)
            client.save_place("Boat", here.latitude, here.longitude, radius=2000)
            client.save_place("Dock", here.latitude, here.longitude, radius=3000)
            self.assertEqual(client.start_monitoring(["Dock"]), ["Dock"])
            monitor = client.monitor(["Boat"], timeout=30)
            # Dock's entry is not this iterator's.
            entered = next(monitor)
            self.assertEqual((entered.entered, entered.name), (True, "Boat"))
            self.assertAlmostEqual(entered.location.latitude, 44.435, delta=0.01)
            self.assertEqual(sorted(client.get("regions")), ["Boat", "Dock"])
            monitor.close()
            # Closing the iterator stopped its place only.
            self.assertEqual(client.get("regions"), ["Dock"])
            self.assertEqual(client.stop_monitoring(), [])
            with self.assertRaises(akloc.NotFound):
                client.start_monitoring(["Nowhere"])

    def test_asyncio_monitor(self) -> None:
        async def main() -> akloc.RegionEvent:
            async with akloc.aio.connect(self.replay.socket, timeout=10) as client:
                here = await client.request_location(timeout=10)
                await client.save_place("Boat", here.latitude, here.longitude, radius=2000)
                monitor = client.monitor(timeout=30)
                entered = await monitor.__anext__()
                await monitor.aclose()
                self.assertEqual(await client.get("regions"), [])
                return entered

        entered = asyncio.run(main())
        self.assertEqual((entered.entered, entered.name), (True, "Boat"))


if __name__ == "__main__":
    unittest.main()
