"""The blocking client."""

import collections
import random
import socket as _socket
import time
from typing import Any, Deque, Dict, Iterator, List, Optional, Tuple

from . import _protocol as wire
from .errors import AklocError, ConnectionLost
from .models import Change, Event, Location

__all__ = ["Client"]


class Client:
    """One connection to aklocd.

    ``socket`` defaults to ``$AKLOC_SOCKET``, else ``/run/akloc/akloc.sock``.
    ``timeout`` (seconds) bounds each wait for a reply; ``watch`` and
    ``observe`` wait for events as long as their own ``timeout`` says (None:
    for ever). Events that arrive while a request waits for its reply are
    kept for ``events()``, ``watch()`` and ``observe()``.
    """

    def __init__(self, socket: Optional[str] = None, timeout: float = 30.0) -> None:
        self.path = socket or wire.default_socket()
        self.timeout = timeout
        self._events: Deque[Event] = collections.deque()
        self._sock: Optional[_socket.socket] = None
        self._session = wire.Session()
        self._connect()

    # -- connection ---------------------------------------------------------

    def _connect(self) -> None:
        self._session = wire.Session()
        self._events.clear()
        sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            sock.settimeout(self.timeout)
            sock.connect(self.path)
        except OSError as error:
            sock.close()
            raise ConnectionLost(f"cannot connect to aklocd at {self.path}: {error.strerror or error}") from None
        self._sock = sock
        try:
            while self._session.hello is None:
                self._read(self.timeout)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def hello(self) -> wire.Hello:
        assert self._session.hello is not None
        return self._session.hello

    @property
    def authorization_status(self) -> str:
        """This connection's status when it connected (``authorizedAlways``, …)."""
        return self.hello.authorization_status

    def _read(self, timeout: Optional[float]) -> List[wire.Message]:
        """Reads once (bounded by ``timeout``) and returns the messages completed."""
        if self._sock is None:
            raise ConnectionLost("the client is closed")
        self._sock.settimeout(timeout)
        try:
            data = self._sock.recv(65536)
        except ConnectionResetError:
            # The daemon closed with our request unread: an end of file all the same.
            data = b""
        except _socket.timeout:
            raise ConnectionLost(f"aklocd at {self.path} sent nothing within {timeout} s") from None
        except OSError as error:
            self.close()
            raise ConnectionLost(f"reading from aklocd at {self.path}: {error.strerror or error}") from None
        if not data:
            ended = self._session.closed(self.path)
            self.close()
            raise ended
        try:
            return self._session.receive(data)
        except AklocError:
            self.close()
            raise

    def _send(self, op: str, arguments: Optional[Dict[str, Any]] = None) -> int:
        if self._sock is None:
            raise ConnectionLost("the client is closed")
        request_id, line = self._session.request(op, arguments)
        try:
            self._sock.sendall(line)
        except OSError as error:
            # The daemon closed: what it sent before says why (a line cut
            # off, or a plain close), so read that out rather than report EPIPE.
            for _ in range(64):
                if self._sock is None:
                    break
                try:
                    self._events.extend(m for m in self._read(1.0) if isinstance(m, Event))
                except AklocError as reason:
                    raise reason from None
            self.close()
            raise ConnectionLost(f"writing to aklocd at {self.path}: {error.strerror or error}") from None
        return request_id

    # -- requests -----------------------------------------------------------

    def request(self, op: str, reply_timeout: Optional[float] = None, **arguments: Any) -> Any:
        """Sends any op (arguments by their wire names; None ones left out)
        and returns its result; an error reply raises its typed exception.
        ``reply_timeout`` (default the client's ``timeout``) bounds the wait."""
        request_id = self._send(op, arguments)
        wait = self.timeout if reply_timeout is None else reply_timeout
        deadline = time.monotonic() + wait
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ConnectionLost(f"aklocd did not answer {op} within {wait} s")
            answer: Optional[wire.Reply] = None
            # Events read with the reply (before or after it) are kept, in order.
            for message in self._read(remaining):
                if isinstance(message, wire.Reply) and message.id == request_id:
                    answer = message
                elif isinstance(message, Event):
                    self._events.append(message)
            if answer is not None:
                return answer.value()

    def get(self, key_path: str) -> Any:
        """The current value of a key path (``myLocation``, ``state``, …);
        location paths give a Location, or None before the first fix."""
        value = self.request("get", keyPath=key_path)
        if key_path in ("myLocation", "rawLocation") and value is not None:
            return Location.from_json(value)
        return value

    def status(self) -> Dict[str, Any]:
        """The daemon's status object (docs/protocol.md §7)."""
        return wire.as_object(self.request("status"), "status")

    def request_location(self, timeout: float = 10.0) -> Location:
        """One fresh location, forced past the throttle; raises Timeout when
        none comes within ``timeout`` seconds, Unavailable while paused."""
        return Location.from_json(self.request("requestLocation", reply_timeout=timeout + 5, timeout=timeout))

    def request_authorization(self, type: str = "whenInUse") -> str:
        """Asks for ``whenInUse`` or ``always``; returns the status granted."""
        result = self.request("requestAuthorization", type=type)
        return str(result.get("authorizationStatus", "")) if isinstance(result, dict) else ""

    def pause(self) -> None:
        self.request("pause")

    def resume(self) -> None:
        self.request("resume")

    def reload(self) -> None:
        self.request("reload")

    def authorize(self, subject: str, status: str) -> None:
        """Admin: sets the rule for a user or ``@group`` to always, whenInUse or deny."""
        self.request("authorize", subject=subject, status=status)

    # -- streams ------------------------------------------------------------

    def events(self, timeout: Optional[float] = None) -> Iterator[Event]:
        """Every event, kept ones first. ``timeout`` bounds the wait for each
        (ConnectionLost when it passes); None waits for ever."""
        while True:
            while self._events:
                yield self._events.popleft()
            for message in self._read(timeout):
                if isinstance(message, Event):
                    self._events.append(message)

    def watch(
        self,
        min_interval: Optional[float] = None,
        max_interval: Optional[float] = None,
        speed: Optional[float] = None,
        distance: Optional[float] = None,
        accuracy: Optional[float] = None,
        every_epoch: bool = False,
        timeout: Optional[float] = None,
        reconnect: bool = False,
    ) -> Iterator[Location]:
        """Starts updates and yields each delivered location (throttled per
        the policy: ``speed`` is updateSpeed, ``distance`` distanceFilter,
        ``accuracy`` desiredAccuracy). With ``reconnect`` a lost daemon is
        waited for (backoff 0.25 s doubling to 5 s) and updates start again;
        without it ConnectionLost ends the loop. Updates stop when the
        generator is closed."""
        arguments: Dict[str, Any] = {
            "policy": wire.policy(min_interval, max_interval, speed, distance, accuracy),
            "everyEpoch": True if every_epoch else None,
        }
        delay = 0.25
        while True:
            try:
                self.request("startUpdatingLocation", **arguments)
                delay = 0.25
                for event in self.events(timeout):
                    if event.name == "didUpdateLocation":
                        location = event.location
                        if location is not None:
                            yield location
            except ConnectionLost:
                if not reconnect:
                    raise
                self.close()
            finally:
                if self._sock is not None:
                    try:
                        self.request("stopUpdatingLocation", reply_timeout=min(self.timeout, 5.0))
                    except AklocError:
                        pass
            while True:
                time.sleep(delay * (1 - 0.2 * random.random()))
                delay = min(delay * 2, 5.0)
                try:
                    self._connect()
                    break
                except ConnectionLost:
                    continue

    def observe(
        self,
        key_path: str,
        initial: bool = True,
        old: bool = False,
        min_interval: Optional[float] = None,
        max_interval: Optional[float] = None,
        speed: Optional[float] = None,
        distance: Optional[float] = None,
        accuracy: Optional[float] = None,
        timeout: Optional[float] = None,
    ) -> Iterator[Change]:
        """KVO: yields a Change for each change of ``key_path`` (the current
        value first with ``initial``). Location paths are throttled per the
        policy. The observation ends when the generator is closed."""
        options = [name for name, chosen in (("initial", initial), ("old", old)) if chosen]
        self.request(
            "observe",
            keyPath=key_path,
            options=options or None,
            policy=wire.policy(min_interval, max_interval, speed, distance, accuracy),
        )
        try:
            for event in self.events(timeout):
                if event.name == "change" and event.fields.get("keyPath") == key_path:
                    yield wire.change_of(event)
        finally:
            if self._sock is not None:
                try:
                    self.request("unobserve", reply_timeout=min(self.timeout, 5.0), keyPath=key_path)
                except AklocError:
                    pass

    # -- places and countries (DESIGN §9) ----------------------------------

    def reverse_geocode(self, latitude: Optional[float] = None, longitude: Optional[float] = None) -> Dict[str, Any]:
        """The placemark of a coordinate, or of the current fix when none is given."""
        result = self.request("reverseGeocode", **wire.reverse_geocode_args(latitude, longitude))
        return wire.member_object(result, "placemark", "reverseGeocode")

    def search_places(
        self,
        query: str,
        near: Optional[Tuple[float, float]] = None,
        within: Optional[float] = None,
        limit: Optional[int] = None,
    ) -> List[Dict[str, Any]]:
        """Places whose name starts a word with ``query``, best first."""
        result = self.request("searchPlaces", **wire.search_places_args(query, near, within, limit))
        return wire.placemarks(result)

    def countries(
        self,
        code: Optional[str] = None,
        phone_code: Optional[str] = None,
        query: Optional[str] = None,
        locale: Optional[str] = None,
    ) -> List[Dict[str, Any]]:
        """Every country matching one of ``code``, ``phone_code`` or ``query``."""
        result = self.request("countries", **wire.countries_args(code, phone_code, query, locale))
        return wire.member_list(result, "countries", "countries")

    def save_place(
        self,
        name: str,
        latitude: Optional[float] = None,
        longitude: Optional[float] = None,
        radius: Optional[float] = None,
        note: Optional[str] = None,
        shared: Optional[bool] = None,
    ) -> Dict[str, Any]:
        """Saves (or replaces) a place; at the current fix when no coordinate is given."""
        arguments = wire.save_place_args(name, latitude, longitude, radius, note, shared)
        return wire.member_object(self.request("savePlace", **arguments), "place", "savePlace")

    def places(self) -> List[Dict[str, Any]]:
        """The caller's saved places and the shared ones."""
        return wire.member_list(self.request("places"), "places", "places")

    def delete_place(self, name: str) -> None:
        """Deletes a saved place; NotFound when there is none of that name."""
        self.request("deletePlace", name=name)
