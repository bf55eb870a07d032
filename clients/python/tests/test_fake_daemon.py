"""Request shapes and bad input, against a scripted fake daemon on a real
Unix socket. The place and country ops are tested here only for the request
they send: aklocd does not serve them yet (DESIGN §9)."""

import asyncio
import inspect
import unittest
from datetime import datetime, timedelta, timezone

import akloc
import akloc.aio
from fake_daemon import HELLO, FakeDaemon, error, event_line, reply

FIX = {
    "latitude": 52.85,
    "longitude": 5.31,
    "speed": 2.6,
    "mode": "3d",
    "timestamp": "2018-08-20T09:47:42.000Z",
}


class RequestShapeTests(unittest.TestCase):
    def test_every_call_sends_the_documented_request(self) -> None:
        results = {
            "reverseGeocode": {"placemark": {"name": "Enkhuizen"}},
            "searchPlaces": {"places": [{"placemark": {"name": "Amsterdam"}}]},
            "countries": {"countries": [{"code": "NL"}]},
            "savePlace": {"place": {"name": "home"}},
            "places": {"places": [{"name": "home"}]},
            "requestLocation": FIX,
            "requestAuthorization": {"authorizationStatus": "authorizedAlways"},
            "get": FIX,
            "status": {"state": "running"},
        }
        with FakeDaemon(lambda request: reply(request, results.get(request["op"]))) as fake:
            with akloc.Client(socket=fake.path, timeout=5) as client:
                self.assertEqual(client.authorization_status, "authorizedAlways")
                self.assertEqual(client.reverse_geocode(), {"name": "Enkhuizen"})
                client.reverse_geocode(52.7, 5.3)
                found = client.search_places("amst", near=(52.4, 4.9), within=5000, limit=3)
                self.assertEqual(found, [{"name": "Amsterdam"}])
                self.assertEqual(client.countries(phone_code="+31", locale="nl"), [{"code": "NL"}])
                client.countries(code="nld")
                client.countries(query="nether")
                self.assertEqual(client.save_place("home", 52.1, 5.2, radius=50, note="front door"), {"name": "home"})
                client.save_place("here")
                self.assertEqual(client.places(), [{"name": "home"}])
                self.assertIsNone(client.delete_place("home"))
                location = client.request_location(timeout=3)
                self.assertEqual(client.request_authorization("always"), "authorizedAlways")
                self.assertEqual(client.get("myLocation"), location)
                self.assertEqual(client.status(), {"state": "running"})
        sent = [{key: value for key, value in request.items() if key != "id"} for request in fake.requests]
        self.assertEqual(
            sent,
            [
                {"op": "reverseGeocode"},
                {"op": "reverseGeocode", "coordinate": {"latitude": 52.7, "longitude": 5.3}},
                {
                    "op": "searchPlaces",
                    "query": "amst",
                    "near": {"latitude": 52.4, "longitude": 4.9},
                    "within": 5000,
                    "limit": 3,
                },
                {"op": "countries", "phoneCode": "+31", "locale": "nl"},
                {"op": "countries", "code": "nld"},
                {"op": "countries", "query": "nether"},
                {
                    "op": "savePlace",
                    "name": "home",
                    "coordinate": {"latitude": 52.1, "longitude": 5.2},
                    "radius": 50,
                    "note": "front door",
                },
                {"op": "savePlace", "name": "here"},
                {"op": "places"},
                {"op": "deletePlace", "name": "home"},
                {"op": "requestLocation", "timeout": 3},
                {"op": "requestAuthorization", "type": "always"},
                {"op": "get", "keyPath": "myLocation"},
                {"op": "status"},
            ],
        )
        ids = [request["id"] for request in fake.requests]
        self.assertEqual(ids, sorted(set(ids)), "ids are unique and increasing")
        self.assertEqual(location.latitude, 52.85)
        self.assertEqual(location.speed, 2.6)
        self.assertIsNone(location.altitude)
        self.assertEqual(location.timestamp.year, 2018)

    def test_watch_sends_the_policy_and_yields_updates_then_stops(self) -> None:
        def handler(request: dict) -> bytes:
            if request["op"] != "startUpdatingLocation":
                return reply(request)
            events = [
                {"event": "didGetFirstLocation", "location": FIX},
                {"event": "didUpdateLocation", "location": FIX},
                {"event": "didGetNotification", "notification": "sourceConnected"},
                {"event": "didUpdateLocation", "location": dict(FIX, latitude=52.86), "afterTimeInterval": 5.2},
            ]
            return reply(request) + b"".join(event_line(event) for event in events)

        with FakeDaemon(handler) as fake:
            with akloc.Client(socket=fake.path, timeout=5) as client:
                watch = client.watch(min_interval=1, max_interval=60, speed=1.5, distance=10, accuracy=25)
                latitudes = [next(watch).latitude, next(watch).latitude]
                watch.close()
        self.assertEqual(latitudes, [52.85, 52.86])
        self.assertEqual(
            fake.requests[0]["policy"],
            {"updateSpeed": 1.5, "minInterval": 1, "maxInterval": 60, "distanceFilter": 10, "desiredAccuracy": 25},
        )
        ops = [request["op"] for request in fake.requests]
        self.assertEqual(ops, ["startUpdatingLocation", "stopUpdatingLocation"])

    def test_countries_takes_one_selector(self) -> None:
        with FakeDaemon() as fake, akloc.Client(socket=fake.path, timeout=5) as client:
            with self.assertRaises(ValueError):
                client.countries(code="NL", query="neth")
            with self.assertRaises(ValueError):
                client.reverse_geocode(latitude=52.0)

    def test_error_replies_raise_typed_exceptions_with_the_wire_code(self) -> None:
        codes = {
            "deletePlace": ("notFound", akloc.NotFound),
            "get": ("unknownKeyPath", akloc.UnknownKeyPath),
            "pause": ("forbidden", akloc.Forbidden),
            "requestLocation": ("timeout", akloc.Timeout),
            "savePlace": ("storageFailed", akloc.StorageFailed),
            "status": ("somethingNew", akloc.RequestError),
        }
        with FakeDaemon(lambda request: error(request, codes[request["op"]][0], "said the fake")) as fake:
            with akloc.Client(socket=fake.path, timeout=5) as client:
                for op, (code, cls) in codes.items():
                    with self.assertRaises(cls) as raised:
                        client.request(op)
                    self.assertEqual(raised.exception.code, code)
                    self.assertEqual(raised.exception.message, "said the fake")
                    self.assertIsInstance(raised.exception, akloc.AklocError)

    def test_a_malformed_result_is_a_protocol_violation(self) -> None:
        results = {"places": {"places": "home"}, "countries": [], "status": None, "searchPlaces": {"places": [{}]}}
        with FakeDaemon(lambda request: reply(request, results[request["op"]])) as fake:
            with akloc.Client(socket=fake.path, timeout=5) as client:
                for call in (client.places, client.countries, client.status, lambda: client.search_places("x")):
                    with self.assertRaises(akloc.ProtocolViolation):
                        call()

    def test_nan_is_refused_before_sending(self) -> None:
        with FakeDaemon() as fake, akloc.Client(socket=fake.path, timeout=5) as client:
            with self.assertRaises(akloc.AklocError):
                client.reverse_geocode(float("nan"), 5.0)
        self.assertEqual(fake.requests, [])


POINT = dict(FIX, receivedAt="2018-08-20T09:47:42.100Z", segment=3)
PLACE = {"name": "Dock", "coordinate": {"latitude": 52.85, "longitude": 5.31}, "radius": 100, "shared": False}


def track_and_regions(request: dict) -> bytes:
    """Answers as aklocd: two track pages, the monitored names, region events after startMonitoring."""
    op = request["op"]
    if op == "track":
        last = request.get("after") == "page2"
        page = {"points": [dict(POINT, segment=4 if last else 3)], "next": None if last else "page2"}
        return reply(request, page)
    if op in ("startMonitoring", "stopMonitoring"):
        answer = reply(request, {"places": [] if op == "stopMonitoring" else ["Dock"]})
        if op == "startMonitoring":
            for name in ("didEnterRegion", "didExitRegion"):
                answer += event_line({"event": name, "place": PLACE, "location": FIX})
        return answer
    return reply(request)


# Every call both clients have, with the request it must send (id left out).
CALLS = [
    (
        ("configure",),
        {"min_interval": 1, "accuracy": 20},
        {"op": "configure", "policy": {"minInterval": 1, "desiredAccuracy": 20}},
    ),
    (("configure",), {}, {"op": "configure", "policy": {}}),
    (("pause",), {}, {"op": "pause"}),
    (("resume",), {}, {"op": "resume"}),
    (("reload",), {}, {"op": "reload"}),
    (("authorize", "@staff", "whenInUse"), {}, {"op": "authorize", "subject": "@staff", "status": "whenInUse"}),
    (
        ("track",),
        {"since": datetime(2026, 12, 1, 9, tzinfo=timezone(timedelta(hours=1))), "until": 1764576000.5, "limit": 2},
        {"op": "track", "since": "2026-12-01T08:00:00.000Z", "until": 1764576000.5, "limit": 2},
    ),
    (
        ("track",),
        {"since": "2026-12-01", "after": "page2", "simplify": 5},
        {"op": "track", "since": "2026-12-01", "after": "page2", "simplify": 5},
    ),
    (("clear_track",), {}, {"op": "clearTrack"}),
    (("clear_track",), {"before": "2026-11-01"}, {"op": "clearTrack", "before": "2026-11-01"}),
    (("start_monitoring",), {}, {"op": "startMonitoring"}),
    (("start_monitoring", ["Dock"]), {}, {"op": "startMonitoring", "places": ["Dock"]}),
    (("stop_monitoring", ("Dock",)), {}, {"op": "stopMonitoring", "places": ["Dock"]}),
]


class TrackMonitoringAndAdminTests(unittest.TestCase):
    """The calls added for parity: each client sends the same request and returns the same value."""

    def run_blocking(self, path: str) -> list:
        with akloc.Client(socket=path, timeout=5) as client:
            results = [getattr(client, name)(*args, **kwargs) for (name, *args), kwargs, _ in CALLS]
            results.append(list(client.track_points(since=0, page_size=1)))
            monitor = client.monitor(["Dock"], timeout=5)
            results.append([next(monitor), next(monitor)])
            monitor.close()
        return results

    def run_asyncio(self, path: str) -> list:
        async def main() -> list:
            async with akloc.aio.connect(path, timeout=5) as client:
                results = [await getattr(client, name)(*args, **kwargs) for (name, *args), kwargs, _ in CALLS]
                results.append([point async for point in client.track_points(since=0, page_size=1)])
                monitor = client.monitor(["Dock"], timeout=5)
                results.append([await monitor.__anext__(), await monitor.__anext__()])
                await monitor.aclose()
                return results

        return asyncio.run(main())

    def test_both_clients_send_the_documented_requests_and_read_the_answers(self) -> None:
        expected_requests = [request for _, _, request in CALLS] + [
            {"op": "track", "since": 0, "limit": 1},
            {"op": "track", "since": 0, "limit": 1, "after": "page2"},
            {"op": "startMonitoring", "places": ["Dock"]},
            {"op": "stopMonitoring", "places": ["Dock"]},
        ]
        outcomes = []
        for run in (self.run_blocking, self.run_asyncio):
            with FakeDaemon(track_and_regions) as fake:
                results = run(fake.path)
            sent = [{key: value for key, value in request.items() if key != "id"} for request in fake.requests]
            self.assertEqual(sent, expected_requests, run.__name__)
            outcomes.append(results)
        self.assertEqual(outcomes[0], outcomes[1])
        results = outcomes[0]
        page = results[6]
        self.assertIsInstance(page, akloc.TrackPage)
        self.assertEqual(page.next, "page2")
        self.assertEqual((page.points[0].segment, page.points[0].latitude), (3, 52.85))
        self.assertEqual(page.points[0].received_at.microsecond, 100000)
        self.assertEqual(results[10], ["Dock"])
        self.assertEqual(results[12], [])
        self.assertEqual([point.segment for point in results[-2]], [3, 4])
        entered, exited = results[-1]
        self.assertEqual((entered.entered, entered.name, exited.entered), (True, "Dock", False))
        self.assertEqual(entered.location.latitude, 52.85)

    def test_the_clients_have_the_same_calls(self) -> None:
        def public(cls: type) -> dict:
            return {
                name: list(inspect.signature(member).parameters)
                for name, member in vars(cls).items()
                if callable(member) and not name.startswith("_") and name != "connect"
            }

        self.assertEqual(public(akloc.aio.Client), public(akloc.Client))

    def test_bad_arguments_are_refused_before_sending_naming_the_argument(self) -> None:
        with FakeDaemon(track_and_regions) as fake, akloc.Client(socket=fake.path, timeout=5) as client:
            cases = [
                (ValueError, "since: give an aware datetime", lambda: client.track(since=datetime(2026, 12, 1))),
                (TypeError, "until must be a datetime", lambda: client.track(until=True)),
                (TypeError, "before must be a datetime", lambda: client.clear_track(before=[2026])),
                (ValueError, "before must be a finite number", lambda: client.clear_track(before=float("inf"))),
                (TypeError, "places must be a list of names", lambda: client.start_monitoring("Dock")),
                (TypeError, "places must be a list of names", lambda: next(client.monitor("Dock"))),
            ]
            for cls, message, call in cases:
                with self.assertRaises(cls) as raised:
                    call()
                self.assertIn(message, str(raised.exception))
        self.assertEqual(fake.requests, [])

    def test_malformed_track_and_region_answers_are_protocol_violations(self) -> None:
        answers = {
            "points": {"next": None},
            "segment": {"points": [dict(FIX, segment="3")], "next": None},
            "next": {"points": [], "next": 7},
            "location": {"points": [{"segment": 1}], "next": None},
        }

        def handler(request: dict) -> bytes:
            if request["op"] == "track":
                return reply(request, answers[request["after"]])
            if request["op"] == "startMonitoring":
                return reply(request, {"places": "Dock"})
            return reply(request, {"places": [1]})

        with FakeDaemon(handler) as fake, akloc.Client(socket=fake.path, timeout=5) as client:
            for after in answers:
                with self.assertRaises(akloc.ProtocolViolation) as raised:
                    client.track(after=after)
                self.assertIn(after, raised.exception.message)
            for call in (client.start_monitoring, client.stop_monitoring):
                with self.assertRaises(akloc.ProtocolViolation) as raised:
                    call()
                self.assertIn("'places' is not a list of names", raised.exception.message)
        with self.assertRaises(akloc.ProtocolViolation):
            akloc.RegionEvent.from_event(akloc.Event("didEnterRegion", {"place": "Dock"}))


ARRIVAL = {
    "arrival": "2026-11-30T07:02:11.000Z",
    "coordinate": {"latitude": 52.7033, "longitude": 5.2917},
    "radius": 0.0,
}
DEPARTURE = dict(
    ARRIVAL,
    coordinate={"latitude": 52.70331, "longitude": 5.29168},
    departure="2026-11-30T11:30:05.000Z",
    radius=6.8,
    place="Home",
    country={"code": "NL", "name": "Netherlands"},
    timeZone={"identifier": "Europe/Amsterdam", "abbreviation": "CET", "secondsFromGMT": 3600},
)


def visits_then(*visits: object):
    """Answers startMonitoringVisits, then sends each of ``visits`` as a didVisit."""

    def handler(request: dict) -> bytes:
        answer = reply(request)
        if request["op"] == "startMonitoringVisits":
            for visit in visits:
                answer += event_line({"event": "didVisit", "visit": visit})
        return answer

    return handler


class VisitTests(unittest.TestCase):
    """monitor_visits in both clients: CoreLocation's didVisit order, and garbage named."""

    def test_both_clients_yield_the_arrival_then_the_same_visit_with_its_departure(self) -> None:
        async def asyncio_visits(path: str) -> list:
            async with akloc.aio.connect(path, timeout=5) as client:
                visits = client.monitor_visits(timeout=5)
                got = [await visits.__anext__(), await visits.__anext__()]
                await visits.aclose()
                await client.start_monitoring_visits()
                await client.stop_monitoring_visits()
                return got

        for run in ("blocking", "asyncio"):
            with FakeDaemon(visits_then(ARRIVAL, DEPARTURE)) as fake:
                if run == "blocking":
                    with akloc.Client(socket=fake.path, timeout=5) as client:
                        visits = client.monitor_visits(timeout=5)
                        arrival, departure = next(visits), next(visits)
                        visits.close()
                        client.start_monitoring_visits()
                        client.stop_monitoring_visits()
                else:
                    arrival, departure = asyncio.run(asyncio_visits(fake.path))
            ops = [request["op"] for request in fake.requests]
            self.assertEqual(ops, ["startMonitoringVisits", "stopMonitoringVisits"] * 2, run)
            self.assertIsNone(arrival.departure)
            self.assertEqual(arrival.arrival, datetime(2026, 11, 30, 7, 2, 11, tzinfo=timezone.utc))
            self.assertEqual(departure.arrival, arrival.arrival, "the same visit")
            self.assertEqual(departure.departure, datetime(2026, 11, 30, 11, 30, 5, tzinfo=timezone.utc))
            self.assertEqual((departure.latitude, departure.longitude, departure.radius), (52.70331, 5.29168, 6.8))
            self.assertEqual((departure.place, departure.country["code"]), ("Home", "NL"))
            self.assertEqual(departure.time_zone["identifier"], "Europe/Amsterdam")
            self.assertIsNone(arrival.place)

    def test_a_garbage_visit_is_a_protocol_violation_naming_the_member_and_the_client_goes_on(self) -> None:
        garbage = [
            ("here", '"visit" must be an object'),
            ({"coordinate": ARRIVAL["coordinate"], "radius": 1}, '"visit.arrival" is not an ISO 8601 time'),
            (dict(ARRIVAL, arrival="yesterday"), '"visit.arrival" is not an ISO 8601 time'),
            (dict(ARRIVAL, departure="2026-11-30T07:00:00Z"), '"visit.departure"'),
            (dict(ARRIVAL, coordinate={"latitude": "n", "longitude": 5}), '"visit.coordinate.latitude" is not a'),
            (dict(ARRIVAL, coordinate={"latitude": 91, "longitude": 5}), '"visit.coordinate.latitude" is not a number'),
            (dict(ARRIVAL, coordinate=[52, 5]), '"visit.coordinate" must be an object'),
            (dict(ARRIVAL, radius=-1), '"visit.radius" is not a number'),
            (dict(ARRIVAL, radius=True), '"visit.radius" is not a number'),
            (dict(ARRIVAL, place=7), '"visit.place" must be a str'),
            (dict(ARRIVAL, timeZone="UTC"), '"visit.timeZone" must be a dict'),
        ]
        for visit, message in garbage:
            with FakeDaemon(visits_then(visit)) as fake, akloc.Client(socket=fake.path, timeout=5) as client:
                visits = client.monitor_visits(timeout=5)
                with self.assertRaises(akloc.ProtocolViolation) as raised:
                    next(visits)
                self.assertIn(message, raised.exception.message, visit)
                self.assertEqual(raised.exception.code, "badMessage")
                client.stop_monitoring_visits()  # the connection is still good
        with self.assertRaises(akloc.ProtocolViolation):
            akloc.Visit.from_event(akloc.Event("didEnterRegion", {"visit": ARRIVAL}))


class BadInputTests(unittest.TestCase):
    def expect_violation(self, greeting: bytes, contains: str, then_close: bool = False) -> None:
        with FakeDaemon(greeting=greeting, then_close=then_close) as fake:
            with self.assertRaises(akloc.ProtocolViolation) as raised:
                with akloc.Client(socket=fake.path, timeout=5) as client:
                    client.status()
            self.assertIn(contains, raised.exception.message)
            self.assertEqual(raised.exception.code, "badMessage")

            async def main() -> None:
                client = await akloc.aio.Client.connect(fake.path, timeout=5)
                try:
                    await client.status()
                finally:
                    await client.close()

            with self.assertRaises(akloc.ProtocolViolation) as raised:
                asyncio.run(main())
            self.assertIn(contains, raised.exception.message)

    def test_garbage_instead_of_hello(self) -> None:
        self.expect_violation(b"this is not json\n", "not JSON")

    def test_an_unknown_protocol_version(self) -> None:
        self.expect_violation(b'{"event":"hello","protocol":2,"version":"9"}\n', "protocol 2")

    def test_no_hello(self) -> None:
        self.expect_violation(b'{"id":1,"ok":true,"result":null}\n', "did not start with hello")

    def test_nan_and_non_objects(self) -> None:
        self.expect_violation(HELLO + b'{"event":"didUpdateLocation","location":{"latitude":NaN}}\n', "not JSON")
        self.expect_violation(HELLO + b"[1,2]\n", "not an object")
        self.expect_violation(HELLO + b'{"id":1}\n', '"ok"')

    def test_invalid_utf8(self) -> None:
        self.expect_violation(HELLO + b'{"event":"\xff\xfe"}\n', "not JSON")

    def test_closing_mid_line(self) -> None:
        self.expect_violation(HELLO + b'{"event":"didUpdateLo', "middle of a line (21 bytes", then_close=True)

    def test_closing_mid_hello(self) -> None:
        self.expect_violation(HELLO[:10], "middle of a line (10 bytes", then_close=True)

    def test_closing_after_a_request_is_a_connection_error(self) -> None:
        with FakeDaemon(lambda request: None) as fake:
            with akloc.Client(socket=fake.path, timeout=5) as client:
                with self.assertRaises(akloc.ConnectionLost) as raised:
                    client.status()
        self.assertIn("closed the connection", raised.exception.message)

    def test_an_endless_line_is_cut_off(self) -> None:
        with FakeDaemon(lambda request: b"x" * (2 << 20)) as fake:
            with akloc.Client(socket=fake.path, timeout=5) as client:
                with self.assertRaises(akloc.ProtocolViolation) as raised:
                    client.status()
        self.assertIn("longer than", raised.exception.message)

    def test_no_daemon(self) -> None:
        with self.assertRaises(akloc.ConnectionLost) as raised:
            akloc.Client(socket="/nonexistent/akloc.sock")
        self.assertIn("cannot connect to aklocd at /nonexistent/akloc.sock", str(raised.exception))

        async def main() -> None:
            async with akloc.aio.connect("/nonexistent/akloc.sock"):
                pass

        with self.assertRaises(akloc.ConnectionLost):
            asyncio.run(main())


class AsyncShapeTests(unittest.TestCase):
    def test_async_calls_send_the_same_requests(self) -> None:
        def handler(request: dict) -> bytes:
            if request["op"] == "startUpdatingLocation":
                update = {"event": "didUpdateLocation", "location": FIX, "afterTimeInterval": 1.0}
                return reply(request) + event_line(update)
            if request["op"] == "countries":
                return reply(request, {"countries": [{"code": "GB"}]})
            return reply(request)

        async def main(path: str) -> list:
            async with await akloc.aio.Client.connect(path, timeout=5) as client:
                watch = client.watch(min_interval=2)
                got = [await watch.__anext__()]
                await watch.aclose()
                got.append(await client.countries(code="gb"))
                return got

        with FakeDaemon(handler) as fake:
            got = asyncio.run(main(fake.path))
        self.assertEqual(got[0].latitude, 52.85)
        self.assertEqual(got[1], [{"code": "GB"}])
        self.assertEqual(
            [{k: v for k, v in request.items() if k != "id"} for request in fake.requests],
            [
                {"op": "startUpdatingLocation", "policy": {"minInterval": 2}},
                {"op": "stopUpdatingLocation"},
                {"op": "countries", "code": "gb"},
            ],
        )


if __name__ == "__main__":
    unittest.main()
