"""The place and country calls (DESIGN §9) of the installed package against
the real aklocd, reading the tree's data/, and a real gpsd replay."""

import asyncio
import math
import os
import unittest

import akloc
import akloc.aio
import akloc.models
from live import Replay, require_tools

# humminbird-M37: a powerboat near 44.435 N, 71.676 W (New Hampshire).
BOAT = "humminbird-M37"
# Off Enkhuizen on the IJsselmeer: docs/places.md's example point.
ENKHUIZEN_BAY = (52.72, 5.33)


def metres_between(a, b) -> float:
    """Great-circle distance (haversine, mean Earth radius): an independent check of ``distance``."""
    (lat1, lon1), (lat2, lon2) = ((math.radians(x), math.radians(y)) for x, y in (a, b))
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return 2 * 6371008.8 * math.asin(math.sqrt(h))


class LiveGeoTests(unittest.TestCase):
    def setUp(self) -> None:
        self.aklocd = require_tools(self)
        self.replay = Replay(self.aklocd, BOAT, 0.2)
        self.addCleanup(self.replay.stop)

    def test_reverse_geocode_a_point_and_the_current_fix(self) -> None:
        with akloc.Client(socket=self.replay.socket, timeout=10) as client:
            place = client.reverse_geocode(*ENKHUIZEN_BAY)
            self.assertEqual(place["locality"], "Enkhuizen")
            self.assertEqual(place["isoCountryCode"], "NL")
            self.assertEqual(place["country"], "Netherlands")
            self.assertEqual(place["timeZone"]["identifier"], "Europe/Amsterdam")
            self.assertTrue(place["formattedAddress"].endswith("NE of Enkhuizen, North Holland, Netherlands"), place)
            town = (place["coordinate"]["latitude"], place["coordinate"]["longitude"])
            self.assertAlmostEqual(place["distance"], metres_between(town, ENKHUIZEN_BAY), delta=0.01 * place["distance"])

            fix = client.request_location(timeout=10)
            here = client.reverse_geocode()
            self.assertEqual(here["isoCountryCode"], "US")
            self.assertEqual(here["timeZone"]["identifier"], "America/New_York")
            self.assertIn(here["timeZone"]["abbreviation"], ("EST", "EDT"))
            town = (here["coordinate"]["latitude"], here["coordinate"]["longitude"])
            # The boat moves 2-3 m/s between the fix read and the one the daemon used.
            self.assertAlmostEqual(here["distance"], metres_between(town, (fix.latitude, fix.longitude)), delta=60)

    def test_search_places(self) -> None:
        with akloc.Client(socket=self.replay.socket, timeout=10) as client:
            found = client.search_places("enk", near=ENKHUIZEN_BAY)
            self.assertEqual(found[0]["name"], "Enkhuizen")
            self.assertLess(found[0]["distance"], 10_000)
            # Case and diacritics folded; anywhere on Earth with within=0.
            zurich = client.search_places("zurich", near=ENKHUIZEN_BAY, within=0, limit=3)
            self.assertEqual(zurich[0]["name"], "Zürich")
            self.assertEqual(zurich[0]["isoCountryCode"], "CH")
            self.assertLessEqual(len(zurich), 3)
            # Without near: from the current fix, within 10 km of the boat.
            client.request_location(timeout=10)
            self.assertEqual(client.search_places("enkhuizen"), [])

    def test_countries_by_code_phone_code_and_localized_query(self) -> None:
        with akloc.Client(socket=self.replay.socket, timeout=10) as client:
            (gb,) = client.countries(code="gb")
            self.assertEqual(
                (gb["code"], gb["alpha3"], gb["numeric"], gb["name"], gb["phoneCode"], gb["flag"]),
                ("GB", "GBR", "826", "United Kingdom", "+44", "\U0001f1ec\U0001f1e7"),
            )
            self.assertEqual(client.countries(code="GBR"), [gb])
            nanp = client.countries(phone_code="+1")
            self.assertEqual(len(nanp), 25, [country["code"] for country in nanp])
            self.assertTrue({"US", "CA", "JM", "PR"} <= {country["code"] for country in nanp})
            self.assertEqual({country["phoneCode"] for country in nanp}, {"+1"})
            self.assertEqual(client.countries(phone_code="1"), nanp)
            german = client.countries(query="deutschland", locale="de")
            self.assertEqual([(c["code"], c["localizedName"]) for c in german], [("DE", "Deutschland")])
            self.assertEqual(client.countries(code="zz"), [])

    def test_errors_carry_the_wire_code_and_the_connection_survives(self) -> None:
        with akloc.Client(socket=self.replay.socket, timeout=10) as client:
            for call in (
                lambda: client.reverse_geocode(91, 0),
                lambda: client.search_places("enk", near=ENKHUIZEN_BAY, limit=0),
                lambda: client.search_places("x" * 10240),
                lambda: client.countries(code="g1"),
                lambda: client.countries(phone_code="+12345"),
                lambda: client.countries(query="neth", locale="xx_NOPE"),
                lambda: client.request("reverseGeocode", coordinates={"latitude": 1, "longitude": 2}),
            ):
                with self.assertRaises(akloc.BadRequest) as raised:
                    call()
                self.assertEqual(raised.exception.code, "badRequest")
                self.assertTrue(raised.exception.message)
            with self.assertRaises(akloc.BadRequest) as raised:
                client.reverse_geocode(91, 0)
            self.assertIn("coordinate.latitude", raised.exception.message)
            self.assertEqual(client.countries(code="nl")[0]["name"], "Netherlands")

    def test_save_list_and_delete_places(self) -> None:
        with akloc.Client(socket=self.replay.socket, timeout=10) as client:
            haven = client.save_place("Haven", 52.7033, 5.2917, radius=250, note="fuel")
            self.assertEqual((haven["name"], haven["radius"], haven["note"]), ("Haven", 250, "fuel"))
            self.assertEqual(haven["coordinate"], {"latitude": 52.7033, "longitude": 5.2917})
            self.assertEqual(haven["owner"], os.geteuid())
            created = akloc.models.parse_time(haven["createdAt"])
            # At the current fix: the boat's position, as the daemon has it.
            fix = client.request_location(timeout=10)
            boat = client.save_place("Boat")
            self.assertLess(metres_between((fix.latitude, fix.longitude), (boat["coordinate"]["latitude"], boat["coordinate"]["longitude"])), 60)
            self.assertEqual(boat["radius"], 100)
            # Replacing keeps createdAt (the OwnTracks waypoint's identity).
            moved = client.save_place("Haven", 52.71, 5.30)
            self.assertEqual(akloc.models.parse_time(moved["createdAt"]), created)
            self.assertNotIn("note", moved)
            self.assertEqual({place["name"]: place for place in client.places()}, {"Haven": moved, "Boat": boat})
            client.delete_place("Boat")
            self.assertEqual([place["name"] for place in client.places()], ["Haven"])
            with self.assertRaises(akloc.NotFound) as raised:
                client.delete_place("Boat")
            self.assertEqual(raised.exception.code, "notFound")
            for call in (
                lambda: client.save_place("x" * 65, 1, 2),
                lambda: client.save_place("Far", 91, 0),
                lambda: client.save_place("Wide", 1, 2, radius=0),
                lambda: client.request("savePlace", name="Typo", coordinate={"latitude": 1, "longitude": 2}, radus=5),
            ):
                with self.assertRaises(akloc.BadRequest) as raised:
                    call()
                self.assertEqual(raised.exception.code, "badRequest")
            self.assertEqual([place["name"] for place in client.places()], ["Haven"])
        # Stored: a new connection (same uid) sees it.
        with akloc.Client(socket=self.replay.socket, timeout=10) as client:
            self.assertEqual([place["name"] for place in client.places()], ["Haven"])

    def test_asyncio_client(self) -> None:
        async def main() -> None:
            async with await akloc.aio.Client.connect(self.replay.socket, timeout=10) as client:
                place, countries, found = await asyncio.gather(
                    client.reverse_geocode(*ENKHUIZEN_BAY),
                    client.countries(phone_code="+31"),
                    client.search_places("enk", near=ENKHUIZEN_BAY, limit=1),
                )
                self.assertEqual(place["locality"], "Enkhuizen")
                self.assertEqual([country["code"] for country in countries], ["NL"])
                self.assertEqual([entry["name"] for entry in found], ["Enkhuizen"])
                with self.assertRaises(akloc.BadRequest) as raised:
                    await client.countries(code="g1")
                self.assertEqual(raised.exception.code, "badRequest")

        asyncio.run(main())


if __name__ == "__main__":
    unittest.main()
