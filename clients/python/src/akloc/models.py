"""Values the daemon sends, as dataclasses (docs/protocol.md §6)."""

from dataclasses import dataclass, field, fields
from datetime import datetime, timezone
from typing import Any, Dict, List, Optional

from .errors import ProtocolViolation

__all__ = ["Location", "Change", "Event", "RegionEvent", "Visit", "TrackPoint", "TrackPage", "parse_time"]


def parse_time(text: str) -> datetime:
    """An ISO 8601 UTC time as aklocd writes it (``2026-11-30T15:09:11.123Z``)."""
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    # Python < 3.11 takes only 3 or 6 fraction digits; aklocd writes 3.
    value = datetime.fromisoformat(text)
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return value


def _number(obj: Dict[str, Any], key: str) -> Optional[float]:
    value = obj.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _integer(obj: Dict[str, Any], key: str) -> Optional[int]:
    value = obj.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value


def _string(obj: Dict[str, Any], key: str) -> Optional[str]:
    value = obj.get(key)
    return value if isinstance(value, str) else None


@dataclass(frozen=True)
class Location:
    """A fix, with CoreLocation's names in Python spelling. A member the
    receiver did not report is None (the wire omits it)."""

    latitude: float
    longitude: float
    mode: str
    altitude: Optional[float] = None
    ellipsoidal_altitude: Optional[float] = None
    horizontal_accuracy: Optional[float] = None
    vertical_accuracy: Optional[float] = None
    speed: Optional[float] = None
    speed_accuracy: Optional[float] = None
    course: Optional[float] = None
    course_accuracy: Optional[float] = None
    climb: Optional[float] = None
    timestamp: Optional[datetime] = None
    received_at: Optional[datetime] = None
    device: Optional[str] = None
    #: How the fix was made (gpsd's TPV status): "plain", "dgps", "rtkFixed",
    #: "rtkFloat", "deadReckoning", "gnssDeadReckoning", "timeOnly",
    #: "simulated" or "pyCode"; None when gpsd did not say.
    fix_status: Optional[str] = None
    satellites_used: Optional[int] = None
    hdop: Optional[float] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, obj: Any) -> "Location":
        """Reads a wire location; raises ProtocolViolation when latitude,
        longitude or mode is missing or mistyped."""
        if not isinstance(obj, dict):
            raise ProtocolViolation(f"a location must be an object, not {type(obj).__name__}")
        latitude = _number(obj, "latitude")
        longitude = _number(obj, "longitude")
        mode = _string(obj, "mode")
        if latitude is None or longitude is None or mode not in ("2d", "3d"):
            raise ProtocolViolation(f"not a location: {obj!r}")

        def time(key: str) -> Optional[datetime]:
            text = _string(obj, key)
            if text is None:
                return None
            try:
                return parse_time(text)
            except ValueError:
                return None

        return cls(
            latitude=latitude,
            longitude=longitude,
            mode=mode,
            altitude=_number(obj, "altitude"),
            ellipsoidal_altitude=_number(obj, "ellipsoidalAltitude"),
            horizontal_accuracy=_number(obj, "horizontalAccuracy"),
            vertical_accuracy=_number(obj, "verticalAccuracy"),
            speed=_number(obj, "speed"),
            speed_accuracy=_number(obj, "speedAccuracy"),
            course=_number(obj, "course"),
            course_accuracy=_number(obj, "courseAccuracy"),
            climb=_number(obj, "climb"),
            timestamp=time("timestamp"),
            received_at=time("receivedAt"),
            device=_string(obj, "device"),
            fix_status=_string(obj, "fixStatus"),
            satellites_used=_integer(obj, "satellitesUsed"),
            hdop=_number(obj, "hdop"),
            raw=dict(obj),
        )


@dataclass(frozen=True)
class Change:
    """One ``change`` event of an observed key path (KVO's change)."""

    key_path: str
    new: Any
    old: Any = None
    has_old: bool = False

    @property
    def new_location(self) -> Optional[Location]:
        """``new`` as a Location, for ``myLocation`` and ``rawLocation``."""
        return Location.from_json(self.new) if isinstance(self.new, dict) else None


@dataclass(frozen=True)
class Event:
    """Any event line: its name (``didUpdateLocation``, ``didGetNotification``…) and all its members."""

    name: str
    fields: Dict[str, Any]

    @property
    def location(self) -> Optional[Location]:
        value = self.fields.get("location")
        return Location.from_json(value) if value is not None else None

    @property
    def after_time_interval(self) -> Optional[float]:
        return _number(self.fields, "afterTimeInterval")

    @property
    def notification(self) -> Optional[str]:
        return _string(self.fields, "notification")

    @property
    def error(self) -> Optional[str]:
        return _string(self.fields, "error")


@dataclass(frozen=True)
class RegionEvent:
    """``didEnterRegion`` or ``didExitRegion`` of a monitored place
    (docs/places.md, "Regions"): the place as saved and the fix that
    decided it."""

    entered: bool
    place: Dict[str, Any]
    location: Optional[Location]

    @property
    def name(self) -> str:
        """The place's name."""
        return str(self.place.get("name", ""))

    @classmethod
    def from_event(cls, event: Event) -> "RegionEvent":
        place = event.fields.get("place")
        if event.name not in ("didEnterRegion", "didExitRegion") or not isinstance(place, dict):
            raise ProtocolViolation(f"not a region event: {event.fields!r}")
        return cls(event.name == "didEnterRegion", place, event.location)


@dataclass(frozen=True)
class Visit:
    """A stay at one place (docs/timeline.md), as ``didVisit``, the
    ``visit`` key path and the ``visits`` op give it (CoreLocation's
    CLVisit): ``departure`` is None while it lasts. ``placemark``,
    ``country`` and ``time_zone`` are the wire's dicts, ``place`` the saved
    place it is in; each None when aklocd does not know it."""

    arrival: datetime
    departure: Optional[datetime]
    latitude: float
    longitude: float
    #: Metres: how far its fixes lay from the centre (root mean square).
    radius: float
    placemark: Optional[Dict[str, Any]] = None
    place: Optional[str] = None
    country: Optional[Dict[str, Any]] = None
    time_zone: Optional[Dict[str, Any]] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, obj: Any) -> "Visit":
        """Reads a wire visit; raises ProtocolViolation naming the member
        that is missing or mistyped (``"visit.coordinate.latitude" is not a
        number``)."""
        if not isinstance(obj, dict):
            raise ProtocolViolation(f"\"visit\" must be an object, not {type(obj).__name__}")

        def time(key: str, required: bool) -> Optional[datetime]:
            text = obj.get(key)
            if text is None and not required:
                return None
            try:
                if isinstance(text, str):
                    return parse_time(text)
            except ValueError:
                pass
            raise ProtocolViolation(f"\"visit.{key}\" is not an ISO 8601 time: {text!r}"[:200])

        def number(container: Any, path: str, low: float, high: float) -> float:
            key = path.rsplit(".", 1)[-1]
            value = _number(container, key) if isinstance(container, dict) else None
            if value is None or not low <= value <= high:
                raise ProtocolViolation(f"\"visit.{path}\" is not a number from {low:g} to {high:g}")
            return value

        def optional(key: str, kind: type) -> Any:
            value = obj.get(key)
            if value is not None and not isinstance(value, kind):
                raise ProtocolViolation(f"\"visit.{key}\" must be a {kind.__name__}, not {type(value).__name__}")
            return value

        arrival = time("arrival", True)
        assert arrival is not None
        departure = time("departure", False)
        if departure is not None and departure < arrival:
            raise ProtocolViolation(f"\"visit.departure\" {departure.isoformat()} is before its arrival")
        coordinate = obj.get("coordinate")
        if not isinstance(coordinate, dict):
            raise ProtocolViolation("\"visit.coordinate\" must be an object with latitude and longitude")
        return cls(
            arrival=arrival,
            departure=departure,
            latitude=number(coordinate, "coordinate.latitude", -90, 90),
            longitude=number(coordinate, "coordinate.longitude", -180, 180),
            radius=number(obj, "radius", 0, float("inf")),
            placemark=optional("placemark", dict),
            place=optional("place", str),
            country=optional("country", dict),
            time_zone=optional("timeZone", dict),
            raw=dict(obj),
        )

    @classmethod
    def from_event(cls, event: Event) -> "Visit":
        if event.name != "didVisit":
            raise ProtocolViolation(f"not a visit event: {event.name}")
        return cls.from_json(event.fields.get("visit"))


@dataclass(frozen=True)
class TrackPoint(Location):
    """A recorded point (docs/track.md): a location and its ``segment``,
    which changes after a gap, a pause, a source loss or a restart."""

    segment: int = 0

    @classmethod
    def from_json(cls, obj: Any) -> "TrackPoint":
        location = Location.from_json(obj)
        segment = obj.get("segment")
        if isinstance(segment, bool) or not isinstance(segment, int):
            raise ProtocolViolation(f"a track point needs a whole-number \"segment\": {obj!r}")
        members = {member.name: getattr(location, member.name) for member in fields(Location)}
        return cls(**members, segment=segment)


@dataclass(frozen=True)
class TrackPage:
    """One page of the track, oldest first; ``next`` is the cursor of the
    page after it (pass it as ``after``), None on the last."""

    points: List[TrackPoint]
    next: Optional[str]

    @classmethod
    def from_json(cls, obj: Any) -> "TrackPage":
        if not isinstance(obj, dict) or not isinstance(obj.get("points"), list):
            raise ProtocolViolation(f"track was answered without a \"points\" list: {obj!r}"[:200])
        cursor = obj.get("next")
        if cursor is not None and not isinstance(cursor, str):
            raise ProtocolViolation(f"track's \"next\" must be a string or null, not {type(cursor).__name__}")
        return cls([TrackPoint.from_json(point) for point in obj["points"]], cursor)
