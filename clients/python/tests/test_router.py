"""The pure parts both clients drive: the router that gives each iterator
its own bounded queue, and the reconnection backoff."""

import unittest

import akloc
from akloc._protocol import Backoff, is_change_of, is_location_update
from akloc._router import Router, check_queue_size


def update(n: int) -> akloc.Event:
    return akloc.Event("didUpdateLocation", {"event": "didUpdateLocation", "n": n})


def change(n: int, key_path: str = "myLocation") -> akloc.Event:
    return akloc.Event("change", {"event": "change", "keyPath": key_path, "new": n})


def notification(name: str) -> akloc.Event:
    return akloc.Event("didGetNotification", {"event": "didGetNotification", "notification": name})


def drain(consumer) -> list:
    taken = []
    while True:
        event = consumer.take()
        if event is None:
            return taken
        taken.append(event)


class RouterTests(unittest.TestCase):
    def test_each_consumer_gets_every_event_it_accepts_in_order(self) -> None:
        router = Router(100)
        watch = router.add("watch()", is_location_update)
        observe = router.add("observe('myLocation')", is_change_of("myLocation"))
        everything = router.add("events()")
        sent = []
        for n in range(20):
            sent += [update(n), change(n), change(n, "state"), notification("paused")]
        for event in sent:
            router.dispatch(event)
        self.assertEqual([e.fields["n"] for e in drain(watch)], list(range(20)))
        self.assertEqual([e.fields["new"] for e in drain(observe)], list(range(20)))
        self.assertEqual(drain(everything), sent)

    def test_a_consumer_that_falls_behind_ends_after_what_it_kept_and_the_others_go_on(self) -> None:
        router = Router(4)
        fast = router.add("watch()", is_location_update)
        slow = router.add("observe('myLocation')", is_change_of("myLocation"))
        for n in range(10):
            router.dispatch(update(n))
            router.dispatch(change(n))
            self.assertEqual(fast.take().fields["n"], n)
        # The four it kept, in order, then the error: never an event from after the gap.
        self.assertEqual([slow.take().fields["new"] for _ in range(4)], [0, 1, 2, 3])
        with self.assertRaises(akloc.EventOverflow) as raised:
            slow.take()
        self.assertEqual(raised.exception.code, "overflow")
        self.assertIn("observe('myLocation') fell 4 events behind", raised.exception.message)
        router.dispatch(change(11))
        with self.assertRaises(akloc.EventOverflow):
            slow.take()
        router.dispatch(update(10))
        self.assertEqual(fast.take().fields["n"], 10)

    def test_the_connections_end_comes_after_the_queued_events(self) -> None:
        router = Router(8)
        watch = router.add("watch()", is_location_update)
        router.dispatch(update(1))
        router.fail(akloc.ConnectionLost("gone"))
        router.fail(akloc.ConnectionLost("closed later"))
        self.assertEqual(watch.take().fields["n"], 1)
        with self.assertRaises(akloc.ConnectionLost) as raised:
            watch.take()
        self.assertEqual(raised.exception.message, "gone")
        # One started after the end ends at once; a new connection starts clean.
        with self.assertRaises(akloc.ConnectionLost):
            router.add("events()").take()
        router.reset()
        self.assertIsNone(router.add("events()").take())

    def test_events_nobody_took_wait_for_the_next_events_iterator(self) -> None:
        router = Router(3)
        watch = router.add("watch()", is_location_update)
        router.dispatch(update(0))
        for name in ("a", "b", "c", "d"):
            router.dispatch(notification(name))
        # The newest three: nobody asked for them, so the backlog does not grow.
        backlog = [e.notification for e in drain(router.add("events()"))]
        self.assertEqual(backlog, ["b", "c", "d"])
        self.assertEqual([e.fields["n"] for e in drain(watch)], [0])
        self.assertEqual(drain(router.add("events()")), [], "the first events() took the backlog")

    def test_removed_consumers_get_nothing_more(self) -> None:
        router = Router(8)
        watch = router.add("watch()", is_location_update)
        router.remove(watch)
        router.remove(watch)
        router.dispatch(update(1))
        self.assertIsNone(watch.take())
        self.assertEqual(router.consumers, 0)

    def test_wake_is_called_for_each_queued_event_and_the_end(self) -> None:
        calls = []
        router = Router(1)
        router.add("watch()", is_location_update, lambda: calls.append("wake"))
        router.dispatch(change(1))
        self.assertEqual(calls, [])
        router.dispatch(update(1))
        router.dispatch(update(2))  # the overflow ends it, which wakes it too
        router.dispatch(update(3))
        self.assertEqual(calls, ["wake", "wake"])

    def test_queue_size_must_be_a_positive_whole_number(self) -> None:
        self.assertEqual(check_queue_size(1), 1)
        for bad in (0, -5, 1.5, True, "8", None):
            with self.assertRaises(ValueError) as raised:
                check_queue_size(bad)
            self.assertIn("queue_size", str(raised.exception))
        with self.assertRaises(ValueError):
            akloc.Client(socket="/nonexistent/akloc.sock", queue_size=0)


class BackoffTests(unittest.TestCase):
    def test_doubles_to_five_seconds_with_at_most_a_fifth_off(self) -> None:
        exact = Backoff(jitter=lambda: 0.0)
        self.assertEqual([exact.next() for _ in range(7)], [0.25, 0.5, 1.0, 2.0, 4.0, 5.0, 5.0])
        exact.reset()
        self.assertEqual(exact.next(), 0.25)
        most = Backoff(jitter=lambda: 1.0)
        self.assertAlmostEqual(most.next(), 0.2)


if __name__ == "__main__":
    unittest.main()
