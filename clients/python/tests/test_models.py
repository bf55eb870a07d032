"""The location's fix-quality members as the daemon writes them (docs/protocol.md §6)."""

import unittest

from akloc import Location


class FixQualityTests(unittest.TestCase):
    def test_fix_status_satellites_and_hdop_are_read(self) -> None:
        location = Location.from_json(
            {
                "latitude": 44.0688,
                "longitude": -121.3142,
                "mode": "3d",
                "fixStatus": "rtkFloat",
                "satellitesUsed": 11,
                "hdop": 0.84,
            }
        )
        self.assertEqual(location.fix_status, "rtkFloat")
        self.assertEqual(location.satellites_used, 11)
        self.assertEqual(location.hdop, 0.84)

    def test_absent_or_mistyped_members_are_none(self) -> None:
        plain = Location.from_json({"latitude": 1.0, "longitude": 2.0, "mode": "2d"})
        self.assertIsNone(plain.fix_status)
        self.assertIsNone(plain.satellites_used)
        self.assertIsNone(plain.hdop)
        odd = Location.from_json(
            {"latitude": 1.0, "longitude": 2.0, "mode": "2d", "fixStatus": 2, "satellitesUsed": 3.5, "hdop": "x"}
        )
        self.assertIsNone(odd.fix_status)
        self.assertIsNone(odd.satellites_used)
        self.assertIsNone(odd.hdop)


if __name__ == "__main__":
    unittest.main()
