"""Iterators side by side on one client, their bounded queues, local
timeouts, reconnecting and ``akloc.aio.connect``, against the scripted fake
daemon on a real Unix socket (test_live_iterators.py: the same against aklocd)."""

import asyncio
import time
import unittest

import akloc
import akloc.aio
from fake_daemon import HELLO, Closing, FakeDaemon, event_line, reply

FIX = {"latitude": 52.85, "longitude": 5.31, "mode": "3d", "timestamp": "2018-08-20T09:47:42.000Z"}


def location(n: int) -> dict:
    return dict(FIX, latitude=52.0 + n / 1000)


def burst(count: int) -> bytes:
    """``count`` updates and ``count`` changes of myLocation, interleaved
    with events neither iterator wants."""
    lines = []
    for n in range(count):
        lines.append({"event": "didUpdateLocation", "location": location(n), "afterTimeInterval": 1.0})
        lines.append({"event": "change", "keyPath": "state", "new": "running"})
        lines.append({"event": "change", "keyPath": "myLocation", "new": location(n)})
        lines.append({"event": "didGetNotification", "notification": "sourceConnected"})
    return b"".join(event_line(line) for line in lines)


class BurstAfterBoth:
    """Answers every request; once both ``observe`` and
    ``startUpdatingLocation`` have come (in either order) sends ``count``
    of each iterator's events after the second one's reply. ``observe``
    with ``initial`` gets its current value at once."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.seen = set()

    def __call__(self, request: dict) -> bytes:
        answer = reply(request)
        if request["op"] == "observe" and "initial" in request.get("options", []):
            answer += event_line({"event": "change", "keyPath": "myLocation", "new": None})
        if request["op"] in ("observe", "startUpdatingLocation"):
            self.seen.add(request["op"])
            if len(self.seen) == 2:
                answer += burst(self.count)
        return answer


def latitudes(items) -> list:
    return [round(item.latitude, 3) for item in items]


def expected(count: int) -> list:
    return [round(52.0 + n / 1000, 3) for n in range(count)]


class SideBySideTests(unittest.TestCase):
    def test_watch_and_observe_interleaved_each_get_every_event(self) -> None:
        count = 50
        with FakeDaemon(BurstAfterBoth(count)) as fake:
            with akloc.Client(socket=fake.path, timeout=5) as client:
                observe = client.observe("myLocation", initial=True, timeout=5)
                watch = client.watch(min_interval=1, timeout=5)
                self.assertIsNone(next(observe).new)
                watched, observed = [], []
                # Unevenly: two of one for one of the other, then the rest of the other.
                for _ in range(count // 2):
                    watched += [next(watch), next(watch)]
                    observed.append(next(observe).new_location)
                observed += [next(observe).new_location for _ in range(count - len(observed))]
                watch.close()
                observe.close()
                self.assertIsNone(client.get("state"))
        self.assertEqual(latitudes(watched), expected(count))
        self.assertEqual(latitudes(observed), expected(count))
        ops = [request["op"] for request in fake.requests]
        self.assertEqual(ops, ["observe", "startUpdatingLocation", "stopUpdatingLocation", "unobserve", "get"])

    def test_asyncio_watch_and_observe_in_two_tasks_each_get_every_event(self) -> None:
        count = 50

        async def take(iterator, wanted: int) -> list:
            got = []
            try:
                async for item in iterator:
                    got.append(item)
                    if len(got) == wanted:
                        return got
            finally:
                await iterator.aclose()
            return got

        async def main(path: str) -> tuple:
            async with akloc.aio.connect(path, timeout=5) as client:
                watched, observed = await asyncio.gather(
                    take(client.watch(min_interval=1, timeout=5), count),
                    take(client.observe("myLocation", initial=False, timeout=5), count),
                )
                return watched, [change.new_location for change in observed]

        with FakeDaemon(BurstAfterBoth(count)) as fake:
            watched, observed = asyncio.run(main(fake.path))
        self.assertEqual(latitudes(watched), expected(count))
        self.assertEqual(latitudes(observed), expected(count))
        ops = sorted(request["op"] for request in fake.requests)
        self.assertEqual(ops, ["observe", "startUpdatingLocation", "stopUpdatingLocation", "unobserve"])


class Paced:
    """Answers every request; ``startUpdatingLocation`` brings an update,
    ``observe`` a change of myLocation, and each ``get`` one of each, so a
    test paces the events by asking. Locations count up per kind."""

    def __init__(self) -> None:
        self.updates = 0
        self.changes = 0

    def __call__(self, request: dict) -> bytes:
        answer = reply(request)
        if request["op"] in ("startUpdatingLocation", "get"):
            answer += event_line({"event": "didUpdateLocation", "location": location(self.updates)})
            self.updates += 1
        if request["op"] in ("observe", "get"):
            answer += event_line({"event": "change", "keyPath": "myLocation", "new": location(self.changes)})
            self.changes += 1
        return answer


class OverflowTests(unittest.TestCase):
    """One iterator left behind: it yields what it kept, then EventOverflow;
    the other, and requests, go on."""

    def test_blocking(self) -> None:
        with FakeDaemon(Paced()) as fake:
            with akloc.Client(socket=fake.path, timeout=5, queue_size=4) as client:
                observe = client.observe("myLocation", initial=False, timeout=5)
                next(observe)
                watch = client.watch(timeout=5)
                watched = []
                for _ in range(10):
                    watched.append(next(watch))
                    client.get("state")
                kept = [next(observe).new_location for _ in range(4)]
                with self.assertRaises(akloc.EventOverflow) as raised:
                    next(observe)
                self.assertIn("observe('myLocation') fell 4 events behind", raised.exception.message)
                self.assertEqual(fake.requests[-1]["op"], "unobserve", "the observation ended with the iterator")
                watch.close()
                self.assertIsNone(client.get("state"))
        self.assertEqual(latitudes(watched), expected(10))
        self.assertEqual(latitudes(kept), expected(5)[1:])

    def test_asyncio(self) -> None:
        async def main(path: str) -> tuple:
            async with akloc.aio.connect(path, timeout=5, queue_size=4) as client:
                observe = client.observe("myLocation", initial=False, timeout=5)
                await observe.__anext__()
                watch = client.watch(timeout=5)
                watched = []
                for _ in range(10):
                    watched.append(await watch.__anext__())
                    await client.get("state")
                kept = [(await observe.__anext__()).new_location for _ in range(4)]
                with self.assertRaises(akloc.EventOverflow):
                    await observe.__anext__()
                await watch.aclose()
                self.assertIsNone(await client.get("state"))
                return watched, kept

        with FakeDaemon(Paced()) as fake:
            watched, kept = asyncio.run(main(fake.path))
        self.assertEqual(latitudes(watched), expected(10))
        self.assertEqual(latitudes(kept), expected(5)[1:])
        ops = [request["op"] for request in fake.requests]
        self.assertEqual(
            ops, ["observe", "startUpdatingLocation"] + ["get"] * 10 + ["unobserve", "stopUpdatingLocation", "get"]
        )


def silent_to_status(request: dict) -> bytes:
    """Never answers ``status``; answers anything else with its op."""
    return b"" if request["op"] == "status" else reply(request, request["op"])


class LocalTimeoutTests(unittest.TestCase):
    def test_blocking_waits_raise_timeout_error_and_the_connection_goes_on(self) -> None:
        with FakeDaemon(silent_to_status) as fake:
            with akloc.Client(socket=fake.path, timeout=0.3) as client:
                started = time.monotonic()
                with self.assertRaises(TimeoutError) as raised:
                    client.status()
                self.assertGreaterEqual(time.monotonic() - started, 0.3)
                self.assertIsInstance(raised.exception, akloc.LocalTimeout)
                self.assertIsInstance(raised.exception, akloc.AklocError)
                self.assertEqual(raised.exception.code, "localTimeout")
                self.assertIn("did not answer status within 0.3 s", str(raised.exception))
                with self.assertRaises(TimeoutError) as raised:
                    next(client.events(timeout=0.2))
                self.assertIn("sent events() nothing within 0.2 s", raised.exception.message)
                self.assertEqual(client.request("pause"), "pause")

    def test_asyncio_waits_raise_timeout_error(self) -> None:
        async def main(path: str) -> None:
            async with akloc.aio.connect(path, timeout=0.3) as client:
                with self.assertRaises(TimeoutError) as raised:
                    await client.status()
                self.assertIsInstance(raised.exception, akloc.LocalTimeout)
                with self.assertRaises(TimeoutError):
                    await client.events(timeout=0.2).__anext__()
                self.assertEqual(await client.request("resume"), "resume")

        with FakeDaemon(silent_to_status) as fake:
            asyncio.run(main(fake.path))

    def test_no_hello_is_a_timeout_error(self) -> None:
        with FakeDaemon(greeting=b"") as fake:
            with self.assertRaises(TimeoutError) as raised:
                akloc.Client(socket=fake.path, timeout=0.3)
            self.assertIn("did not say hello within 0.3 s", str(raised.exception))

            async def main() -> None:
                async with akloc.aio.connect(fake.path, timeout=0.3):
                    self.fail("connected without a hello")

            with self.assertRaises(TimeoutError):
                asyncio.run(main())


def closing_after_one_update(request: dict) -> bytes:
    """Each connection: one update answering startUpdatingLocation, then the daemon goes away."""
    if request["op"] != "startUpdatingLocation":
        return reply(request)
    update = {"event": "didUpdateLocation", "location": location(0), "afterTimeInterval": 1.0}
    return Closing(reply(request) + event_line(update))


class ConnectAndReconnectTests(unittest.TestCase):
    def test_connect_is_an_async_context_manager_and_awaitable(self) -> None:
        async def main(path: str) -> None:
            async with akloc.aio.connect(path, timeout=5) as client:
                self.assertEqual(client.authorization_status, "authorizedAlways")
                self.assertIsNone(await client.get("state"))
            with self.assertRaises(akloc.ConnectionLost) as raised:
                await client.status()
            self.assertIn("the client is closed", raised.exception.message)
            # The older spelling still works.
            async with await akloc.aio.Client.connect(path, timeout=5) as again:
                self.assertIsNone(await again.get("state"))
            bare = await akloc.aio.connect(path, timeout=5)
            await bare.close()

        with FakeDaemon() as fake:
            asyncio.run(main(fake.path))
        self.assertEqual(fake.connections, 3)

    def test_asyncio_watch_reconnects_and_observe_ends(self) -> None:
        async def main(path: str) -> list:
            async with akloc.aio.connect(path, timeout=5) as client:
                observe = client.observe("state", timeout=5)
                await observe.__anext__()
                watch = client.watch(timeout=5, reconnect=True)
                got = [await watch.__anext__() for _ in range(3)]
                with self.assertRaises(akloc.ConnectionLost):
                    await observe.__anext__()
                await watch.aclose()
                return got

        def handler(request: dict) -> bytes:
            if request["op"] == "observe":
                return reply(request) + event_line({"event": "change", "keyPath": "state", "new": "running"})
            return closing_after_one_update(request)

        with FakeDaemon(handler) as fake:
            got = asyncio.run(main(fake.path))
        self.assertEqual(latitudes(got), [52.0] * 3)
        self.assertEqual(fake.connections, 3)
        ops = [request["op"] for request in fake.requests]
        self.assertEqual(ops, ["observe"] + ["startUpdatingLocation"] * 3)

    def test_blocking_watch_reconnects(self) -> None:
        with FakeDaemon(closing_after_one_update) as fake:
            with akloc.Client(socket=fake.path, timeout=5) as client:
                watch = client.watch(timeout=5, reconnect=True)
                got = [next(watch) for _ in range(3)]
                watch.close()
        self.assertEqual(latitudes(got), [52.0] * 3)
        self.assertEqual(fake.connections, 3)

    def test_a_closed_client_does_not_reconnect(self) -> None:
        with FakeDaemon(closing_after_one_update) as fake:
            client = akloc.Client(socket=fake.path, timeout=5)
            watch = client.watch(timeout=5, reconnect=True)
            next(watch)
            client.close()
            with self.assertRaises(akloc.ConnectionLost) as raised:
                next(watch)
            self.assertIn("the client is closed", raised.exception.message)
        self.assertEqual(fake.connections, 1)


if __name__ == "__main__":
    unittest.main()
