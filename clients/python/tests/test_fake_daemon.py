"""Request shapes and bad input, against a scripted fake daemon on a real
Unix socket. The place and country ops are tested here only for the request
they send: aklocd does not serve them yet (DESIGN §9)."""

import asyncio
import unittest

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
        with self.assertRaises(akloc.ConnectionLost):
            asyncio.run(akloc.aio.Client.connect("/nonexistent/akloc.sock"))


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
