"""The wire protocol without I/O (docs/protocol.md): line framing, request
encoding, message decoding and the arguments of each op. The blocking and
the asyncio clients both drive this one session."""

import json
import math
import os
import random
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from .errors import AklocError, ConnectionLost, ProtocolViolation, error_for_code
from .models import Change, Event, Location

__all__ = ["DEFAULT_SOCKET", "PROTOCOL_VERSION", "Backoff", "Session", "Hello", "Reply", "default_socket", "policy"]

DEFAULT_SOCKET = "/run/akloc/akloc.sock"
PROTOCOL_VERSION = 1
#: Lines from aklocd are short (a status is about 1 KiB); this bounds memory
#: against a daemon gone wrong.
MAX_LINE = 1 << 20


def default_socket() -> str:
    """``$AKLOC_SOCKET`` when set, else aklocd's default socket."""
    return os.environ.get("AKLOC_SOCKET") or DEFAULT_SOCKET


@dataclass(frozen=True)
class Hello:
    protocol: int
    version: str
    authorization_status: str


@dataclass(frozen=True)
class Reply:
    id: Any
    ok: bool
    result: Any = None
    error_code: str = ""
    error_message: str = ""

    def value(self) -> Any:
        """The result, or the error reply raised as its typed exception."""
        if not self.ok:
            raise error_for_code(self.error_code, self.error_message)
        return self.result


Message = Union[Hello, Reply, Event]


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def decode_line(line: bytes) -> Message:
    """One line from aklocd (without its newline) as a message; anything
    that is not the protocol raises ProtocolViolation."""
    try:
        obj = json.loads(line.decode("utf-8"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError) as error:
        shown = line[:80].decode("utf-8", "replace")
        raise ProtocolViolation(f"aklocd sent a line that is not JSON ({error}): {shown!r}") from None
    if not isinstance(obj, dict):
        raise ProtocolViolation(f"aklocd sent a JSON {type(obj).__name__}, not an object")
    if "event" in obj:
        name = obj["event"]
        if not isinstance(name, str):
            raise ProtocolViolation('"event" must be a string')
        if name == "hello":
            protocol = obj.get("protocol")
            if isinstance(protocol, bool) or not isinstance(protocol, int):
                raise ProtocolViolation('hello without an integer "protocol"')
            return Hello(protocol, str(obj.get("version", "")), str(obj.get("authorizationStatus", "")))
        return Event(name, obj)
    ok = obj.get("ok")
    if not isinstance(ok, bool):
        raise ProtocolViolation('a message needs "event" or a boolean "ok"')
    if ok:
        return Reply(obj.get("id"), True, obj.get("result"))
    failure = obj.get("error")
    if not isinstance(failure, dict):
        raise ProtocolViolation('an error reply needs an "error" object')
    return Reply(obj.get("id"), False, None, str(failure.get("code", "unknown")), str(failure.get("message", "")))


class Session:
    """One connection's protocol state: framing, the hello, request ids."""

    def __init__(self) -> None:
        self.hello: Optional[Hello] = None
        self._buffer = bytearray()
        self._next_id = 1

    @property
    def pending_bytes(self) -> int:
        """Bytes of a line received without its newline yet."""
        return len(self._buffer)

    def request(self, op: str, arguments: Optional[Dict[str, Any]] = None) -> Tuple[int, bytes]:
        """The next request id and the line to send for it."""
        request_id = self._next_id
        self._next_id += 1
        obj: Dict[str, Any] = {"id": request_id, "op": op}
        for key, value in (arguments or {}).items():
            if value is not None:
                obj[key] = value
        try:
            text = json.dumps(obj, allow_nan=False, separators=(",", ":"))
        except ValueError as error:
            raise AklocError(f"{op}: {error} (NaN and infinities are not JSON)", code="badRequest") from None
        return request_id, text.encode("utf-8") + b"\n"

    def receive(self, data: bytes) -> List[Message]:
        """Messages completed by ``data``. The first line must be a hello of
        this protocol version."""
        self._buffer += data
        messages: List[Message] = []
        while True:
            newline = self._buffer.find(b"\n")
            if newline < 0:
                if len(self._buffer) > MAX_LINE:
                    raise ProtocolViolation(f"aklocd sent a line longer than {MAX_LINE} bytes")
                return messages
            line = bytes(self._buffer[:newline])
            del self._buffer[: newline + 1]
            if line.endswith(b"\r"):
                line = line[:-1]
            if len(line) > MAX_LINE:
                raise ProtocolViolation(f"aklocd sent a line longer than {MAX_LINE} bytes")
            messages.append(self._check(decode_line(line)))

    def _check(self, message: Message) -> Message:
        if isinstance(message, Hello):
            if self.hello is not None:
                raise ProtocolViolation("aklocd said hello twice")
            if message.protocol != PROTOCOL_VERSION:
                raise ProtocolViolation(
                    f"aklocd speaks protocol {message.protocol}; this library speaks {PROTOCOL_VERSION}"
                )
            self.hello = message
        elif self.hello is None:
            raise ProtocolViolation("aklocd did not start with hello")
        return message

    def closed(self, where: str) -> AklocError:
        """The error for end of file."""
        if self._buffer:
            return ProtocolViolation(
                f"aklocd closed the connection in the middle of a line "
                f"({len(self._buffer)} bytes without a newline)"
            )
        if self.hello is None:
            return ConnectionLost(f"aklocd at {where} closed the connection before saying hello")
        return ConnectionLost(f"aklocd at {where} closed the connection")


def policy(
    min_interval: Optional[float] = None,
    max_interval: Optional[float] = None,
    speed: Optional[float] = None,
    distance: Optional[float] = None,
    accuracy: Optional[float] = None,
) -> Optional[Dict[str, float]]:
    """A throttle policy (docs/protocol.md §5); members left out take the
    daemon's defaults. None when every member is left out."""
    members = {
        "updateSpeed": speed,
        "minInterval": min_interval,
        "maxInterval": max_interval,
        "distanceFilter": distance,
        "desiredAccuracy": accuracy,
    }
    chosen = {key: value for key, value in members.items() if value is not None}
    return chosen or None


#: An op and its arguments, as the iterators send them to start and to stop.
Call = Tuple[str, Dict[str, Any]]


def watch_request(
    min_interval: Optional[float],
    max_interval: Optional[float],
    speed: Optional[float],
    distance: Optional[float],
    accuracy: Optional[float],
    every_epoch: bool,
) -> Call:
    return "startUpdatingLocation", {
        "policy": policy(min_interval, max_interval, speed, distance, accuracy),
        "everyEpoch": True if every_epoch else None,
    }


def observe_request(
    key_path: str,
    initial: bool,
    old: bool,
    min_interval: Optional[float],
    max_interval: Optional[float],
    speed: Optional[float],
    distance: Optional[float],
    accuracy: Optional[float],
) -> Call:
    options = [name for name, chosen in (("initial", initial), ("old", old)) if chosen]
    return "observe", {
        "keyPath": key_path,
        "options": options or None,
        "policy": policy(min_interval, max_interval, speed, distance, accuracy),
    }


def value_of(key_path: str, value: Any) -> Any:
    """A ``get`` result: location paths as a Location (None before the first fix)."""
    if key_path in ("myLocation", "rawLocation") and value is not None:
        return Location.from_json(value)
    return value


def authorization_of(result: Any) -> str:
    """``requestAuthorization``'s ``{"authorizationStatus":…}`` as the status."""
    return str(result.get("authorizationStatus", "")) if isinstance(result, dict) else ""


def coordinate(latitude: Optional[float], longitude: Optional[float]) -> Optional[Dict[str, float]]:
    """``{"latitude":…, "longitude":…}``, or None when both are left out."""
    if latitude is None and longitude is None:
        return None
    if latitude is None or longitude is None:
        raise ValueError("give both latitude and longitude, or neither")
    return {"latitude": latitude, "longitude": longitude}


def as_object(result: Any, op: str) -> Dict[str, Any]:
    """A result that must be an object; anything else is not the protocol."""
    if not isinstance(result, dict):
        raise ProtocolViolation(f"{op} was answered with {type(result).__name__}, not an object")
    return result


def member_object(result: Any, key: str, op: str) -> Dict[str, Any]:
    return as_object(as_object(result, op).get(key), f"{op}'s {key!r}")


def member_list(result: Any, key: str, op: str) -> List[Dict[str, Any]]:
    value = as_object(result, op).get(key)
    if not isinstance(value, list):
        raise ProtocolViolation(f"{op}'s {key!r} is not a list")
    return [as_object(item, f"{op}'s {key!r}") for item in value]


def placemarks(result: Any) -> List[Dict[str, Any]]:
    """``searchPlaces``' ``{"places":[{"placemark":…}]}`` as the placemarks."""
    entries = member_list(result, "places", "searchPlaces")
    return [member_object(entry, "placemark", "searchPlaces") for entry in entries]


def change_of(event: Event) -> Change:
    fields = event.fields
    return Change(str(fields.get("keyPath", "")), fields.get("new"), fields.get("old"), "old" in fields)


def location_of(value: Any) -> Location:
    return Location.from_json(value)


# Place and country ops (DESIGN §9): (op, arguments) for each call, shared by
# both clients. Results are unwrapped by the callers.


def reverse_geocode_args(latitude: Optional[float], longitude: Optional[float]) -> Dict[str, Any]:
    return {"coordinate": coordinate(latitude, longitude)}


def search_places_args(
    query: str,
    near: Optional[Tuple[float, float]],
    within: Optional[float],
    limit: Optional[int],
) -> Dict[str, Any]:
    return {
        "query": query,
        "near": coordinate(near[0], near[1]) if near is not None else None,
        "within": within,
        "limit": limit,
    }


def countries_args(
    code: Optional[str], phone_code: Optional[str], query: Optional[str], locale: Optional[str]
) -> Dict[str, Any]:
    chosen = [name for name, value in (("code", code), ("phone_code", phone_code), ("query", query)) if value]
    if len(chosen) > 1:
        raise ValueError(f"give one of code, phone_code, query (got {', '.join(chosen)})")
    return {"code": code, "phoneCode": phone_code, "query": query, "locale": locale}


def save_place_args(
    name: str,
    latitude: Optional[float],
    longitude: Optional[float],
    radius: Optional[float],
    note: Optional[str],
    shared: Optional[bool],
) -> Dict[str, Any]:
    return {
        "name": name,
        "coordinate": coordinate(latitude, longitude),
        "radius": radius,
        "note": note,
        "shared": shared,
    }


# Track and region monitoring (docs/track.md, docs/places.md).

#: What ``track``'s ``since``, ``until`` and ``clearTrack``'s ``before`` take.
TrackTime = Union[datetime, float, str]


def track_time(value: Optional[TrackTime], name: str) -> Union[None, float, str]:
    """A time as the wire takes it: an aware ``datetime`` as ISO 8601 UTC,
    epoch seconds as a number, text as given (the daemon parses it and
    names ``name`` when it cannot)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise ValueError(f"{name}: give an aware datetime (a naive one has no zone to read it in)")
        return value.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a datetime, epoch seconds or ISO 8601 text, not {type(value).__name__}")
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number of epoch seconds, not {value}")
    return value


def track_args(
    since: Optional[TrackTime],
    until: Optional[TrackTime],
    limit: Optional[int],
    after: Optional[str],
    simplify: Optional[float],
) -> Dict[str, Any]:
    return {
        "since": track_time(since, "since"),
        "until": track_time(until, "until"),
        "limit": limit,
        "after": after,
        "simplify": simplify,
    }


def clear_track_args(before: Optional[TrackTime]) -> Dict[str, Any]:
    return {"before": track_time(before, "before")}


def monitoring_args(places: Optional[Sequence[str]]) -> Dict[str, Any]:
    """``places`` as a list of names; None means every place (left out)."""
    if isinstance(places, str):
        # A lone name would be sent as its letters.
        raise TypeError("places must be a list of names, not one string")
    return {"places": list(places) if places is not None else None}


def place_names(result: Any, op: str) -> List[str]:
    """``{"places":[names]}`` of startMonitoring and stopMonitoring."""
    names = as_object(result, op).get("places")
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        raise ProtocolViolation(f"{op}'s 'places' is not a list of names")
    return names


def is_location_update(event: Event) -> bool:
    return event.name == "didUpdateLocation"


def is_region_event_of(places: Optional[Sequence[str]]) -> Callable[[Event], bool]:
    """Entries and exits of ``places`` (of any place when None)."""
    names = None if places is None else set(places)

    def accepts(event: Event) -> bool:
        if event.name not in ("didEnterRegion", "didExitRegion"):
            return False
        place = event.fields.get("place")
        return names is None or (isinstance(place, dict) and place.get("name") in names)

    return accepts


def is_visit(event: Event) -> bool:
    return event.name == "didVisit"


def is_change_of(key_path: str) -> Callable[[Event], bool]:
    return lambda event: event.name == "change" and event.fields.get("keyPath") == key_path


class Backoff:
    """The wait before each reconnection attempt: 0.25 s doubling to 5 s,
    up to a fifth less at random so clients of a restarted daemon do not
    all come back at once (as AklocCore's Backoff for the Swift manager)."""

    first = 0.25
    longest = 5.0

    def __init__(self, jitter: Callable[[], float] = random.random) -> None:
        self._jitter = jitter
        self._delay = self.first

    def reset(self) -> None:
        self._delay = self.first

    def next(self) -> float:
        delay = self._delay * (1 - 0.2 * self._jitter())
        self._delay = min(self._delay * 2, self.longest)
        return delay
