"""The blocking client."""

import contextlib
import socket as _socket
import time
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

from . import _protocol as wire
from ._router import DEFAULT_QUEUE_SIZE, Accepts, Consumer, Router
from .errors import AklocError, ConnectionLost, LocalTimeout
from .models import Change, Event, Location, RegionEvent, TrackPage, TrackPoint, Visit

__all__ = ["Client"]


class Client:
    """One connection to aklocd, for one thread (``akloc.aio`` is for
    concurrency).

    ``socket`` defaults to ``$AKLOC_SOCKET``, else ``/run/akloc/akloc.sock``.
    ``timeout`` (seconds) bounds each wait for a reply; ``watch``,
    ``observe``, ``monitor`` and ``events`` wait for their next event as
    long as their own ``timeout`` says (None: for ever). A wait that passes
    raises ``TimeoutError`` (``akloc.LocalTimeout``).

    Each iterator has its own queue of at most ``queue_size`` events, so
    iterators used side by side each get every one of their events; one
    that falls that far behind the others ends with ``EventOverflow``.
    """

    def __init__(
        self, socket: Optional[str] = None, timeout: float = 30.0, queue_size: int = DEFAULT_QUEUE_SIZE
    ) -> None:
        self.path = socket or wire.default_socket()
        self.timeout = timeout
        self._router = Router(queue_size)
        self._sock: Optional[_socket.socket] = None
        self._session = wire.Session()
        # Counts connections, so an iterator of a lost one does not clean up on its successor.
        self._generation = 0
        self._closed = False
        self._connect()

    # -- connection ---------------------------------------------------------

    def _connect(self) -> None:
        self._session = wire.Session()
        self._router.reset()
        sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            sock.settimeout(self.timeout)
            sock.connect(self.path)
        except OSError as error:
            sock.close()
            raise ConnectionLost(f"cannot connect to aklocd at {self.path}: {error.strerror or error}") from None
        self._sock = sock
        self._generation += 1
        deadline = time.monotonic() + self.timeout
        try:
            while self._session.hello is None:
                if self._read(max(deadline - time.monotonic(), 1e-3)) is None:
                    raise LocalTimeout(f"aklocd at {self.path} did not say hello within {self.timeout} s")
        except BaseException:
            self._drop_socket()
            raise

    def _reconnect(self, backoff: wire.Backoff) -> None:
        """Connects again, waiting ``backoff`` before each attempt, until
        aklocd answers (or the client is closed)."""
        self._drop_socket()
        while True:
            time.sleep(backoff.next())
            if self._closed:
                raise ConnectionLost("the client is closed")
            try:
                self._connect()
                return
            except (ConnectionLost, LocalTimeout):
                continue

    def close(self) -> None:
        self._closed = True
        self._lost(ConnectionLost("the client is closed"))

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

    def _drop_socket(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def _lost(self, error: AklocError) -> AklocError:
        """Closes the connection because of ``error``, which every iterator gets too."""
        self._drop_socket()
        self._router.fail(error)
        return error

    def _read(self, timeout: Optional[float]) -> Optional[List[wire.Message]]:
        """Reads once and returns the messages completed (events among them
        are already handed to the iterators), or None when ``timeout``
        passed first; the connection stays usable then."""
        if self._sock is None:
            raise ConnectionLost("the client is closed")
        self._sock.settimeout(timeout)
        try:
            data = self._sock.recv(65536)
        except ConnectionResetError:
            # The daemon closed with our request unread: an end of file all the same.
            data = b""
        except _socket.timeout:
            return None
        except OSError as error:
            raise self._lost(ConnectionLost(f"reading from aklocd at {self.path}: {error.strerror or error}")) from None
        if not data:
            raise self._lost(self._session.closed(self.path))
        try:
            messages = self._session.receive(data)
        except AklocError as error:
            raise self._lost(error) from None
        for message in messages:
            if isinstance(message, Event):
                self._router.dispatch(message)
        return messages

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
                    if self._read(1.0) is None:
                        break
                except AklocError as reason:
                    raise reason from None
            raise self._lost(
                ConnectionLost(f"writing to aklocd at {self.path}: {error.strerror or error}")
            ) from None
        return request_id

    def _next_event(self, consumer: Consumer, timeout: Optional[float]) -> Event:
        """The consumer's next event, reading for it while it has none;
        ``timeout`` bounds the whole wait."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            event = consumer.take()
            if event is not None:
                return event
            remaining = None if deadline is None else deadline - time.monotonic()
            if (remaining is not None and remaining <= 0) or self._read(remaining) is None:
                raise LocalTimeout(f"aklocd at {self.path} sent {consumer.label} nothing within {timeout} s")

    @contextlib.contextmanager
    def _subscription(self, label: str, start: wire.Call, stop: wire.Call, accepts: Accepts) -> Iterator[Consumer]:
        """A consumer registered before ``start`` is sent, so it misses
        nothing that answers it; at the end ``stop`` is sent on the same
        connection, if it is still there."""
        consumer = self._router.add(label, accepts)
        generation = self._generation
        try:
            self.request(start[0], **start[1])
        except BaseException:
            self._router.remove(consumer)
            raise
        try:
            yield consumer
        finally:
            self._router.remove(consumer)
            if self._sock is not None and self._generation == generation:
                try:
                    self.request(stop[0], reply_timeout=min(self.timeout, 5.0), **stop[1])
                except AklocError:
                    pass

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
            messages = self._read(remaining) if remaining > 0 else None
            if messages is None:
                raise LocalTimeout(f"aklocd did not answer {op} within {wait} s")
            for message in messages:
                if isinstance(message, wire.Reply) and message.id == request_id:
                    return message.value()

    def get(self, key_path: str) -> Any:
        """The current value of a key path (``myLocation``, ``state``, …);
        location paths give a Location, or None before the first fix."""
        return wire.value_of(key_path, self.request("get", keyPath=key_path))

    def status(self) -> Dict[str, Any]:
        """The daemon's status object (docs/protocol.md §7)."""
        return wire.as_object(self.request("status"), "status")

    def request_location(self, timeout: float = 10.0) -> Location:
        """One fresh location, forced past the throttle; raises Timeout when
        none comes within ``timeout`` seconds, Unavailable while paused."""
        return Location.from_json(self.request("requestLocation", reply_timeout=timeout + 5, timeout=timeout))

    def request_authorization(self, type: str = "whenInUse") -> str:
        """Asks for ``whenInUse`` or ``always``; returns the status granted."""
        return wire.authorization_of(self.request("requestAuthorization", type=type))

    def configure(
        self,
        min_interval: Optional[float] = None,
        max_interval: Optional[float] = None,
        speed: Optional[float] = None,
        distance: Optional[float] = None,
        accuracy: Optional[float] = None,
    ) -> None:
        """Sets this connection's default policy for later ``watch`` and
        ``observe`` calls that leave members out (docs/protocol.md §5)."""
        self.request("configure", policy=wire.policy(min_interval, max_interval, speed, distance, accuracy) or {})

    def pause(self) -> None:
        """Admin: stops deliveries and the gpsd watch daemon-wide."""
        self.request("pause")

    def resume(self) -> None:
        """Admin: resumes after ``pause``."""
        self.request("resume")

    def reload(self) -> None:
        """Admin: re-reads the config file."""
        self.request("reload")

    def authorize(self, subject: str, status: str) -> None:
        """Admin: sets the rule for a user or ``@group`` to always, whenInUse or deny."""
        self.request("authorize", subject=subject, status=status)

    # -- streams ------------------------------------------------------------

    def events(self, timeout: Optional[float] = None) -> Iterator[Event]:
        """Every event from the first ``next()`` on, and those that came
        while no iterator was open (say after a ``request`` made just
        before). ``timeout`` bounds the wait for each (TimeoutError when it
        passes); None waits for ever."""
        consumer = self._router.add("events()")
        try:
            while True:
                yield self._next_event(consumer, timeout)
        finally:
            self._router.remove(consumer)

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
        start = wire.watch_request(min_interval, max_interval, speed, distance, accuracy, every_epoch)
        stop: wire.Call = ("stopUpdatingLocation", {})
        backoff = wire.Backoff()
        while True:
            try:
                with self._subscription("watch()", start, stop, wire.is_location_update) as consumer:
                    while True:
                        location = self._next_event(consumer, timeout).location
                        backoff.reset()
                        if location is not None:
                            yield location
            except ConnectionLost:
                if not reconnect or self._closed:
                    raise
            self._reconnect(backoff)

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
        start = wire.observe_request(key_path, initial, old, min_interval, max_interval, speed, distance, accuracy)
        stop = ("unobserve", {"keyPath": key_path})
        with self._subscription(f"observe({key_path!r})", start, stop, wire.is_change_of(key_path)) as consumer:
            while True:
                yield wire.change_of(self._next_event(consumer, timeout))

    def monitor(
        self, places: Optional[Sequence[str]] = None, timeout: Optional[float] = None
    ) -> Iterator[RegionEvent]:
        """Monitors saved places as regions (every place the caller sees when
        ``places`` is None) and yields each entry and exit; monitoring of
        those places stops when the generator is closed."""
        arguments = wire.monitoring_args(places)
        start, stop = ("startMonitoring", arguments), ("stopMonitoring", arguments)
        with self._subscription("monitor()", start, stop, wire.is_region_event_of(places)) as consumer:
            while True:
                yield RegionEvent.from_event(self._next_event(consumer, timeout))

    def monitor_visits(self, timeout: Optional[float] = None) -> Iterator[Visit]:
        """Starts monitoring visits (``always`` or admin) and yields each as
        CoreLocation's didVisit does: at its arrival (``departure`` None),
        then the same visit with its departure; monitoring stops when the
        generator is closed. A visit that is not one raises
        ProtocolViolation naming the member."""
        start: wire.Call = ("startMonitoringVisits", {})
        stop: wire.Call = ("stopMonitoringVisits", {})
        with self._subscription("monitor_visits()", start, stop, wire.is_visit) as consumer:
            while True:
                yield Visit.from_event(self._next_event(consumer, timeout))

    # -- track and regions (docs/track.md, docs/places.md) -------------------

    def track(
        self,
        since: Optional[wire.TrackTime] = None,
        until: Optional[wire.TrackTime] = None,
        limit: Optional[int] = None,
        after: Optional[str] = None,
        simplify: Optional[float] = None,
    ) -> TrackPage:
        """One page of the recorded track, oldest first (``since`` and
        ``until``: aware datetimes, epoch seconds or ISO 8601 text; the
        daemon's defaults are the last 24 hours). Pass ``page.next`` as
        ``after`` for the next page, or use ``track_points``."""
        return TrackPage.from_json(self.request("track", **wire.track_args(since, until, limit, after, simplify)))

    def track_points(
        self,
        since: Optional[wire.TrackTime] = None,
        until: Optional[wire.TrackTime] = None,
        simplify: Optional[float] = None,
        page_size: Optional[int] = None,
    ) -> Iterator[TrackPoint]:
        """Every point of the track between ``since`` and ``until``, a page at a time."""
        after: Optional[str] = None
        while True:
            page = self.track(since, until, page_size, after, simplify)
            yield from page.points
            if page.next is None:
                return
            after = page.next

    def clear_track(self, before: Optional[wire.TrackTime] = None) -> None:
        """Admin: deletes the track before ``before`` (all of it when None)."""
        self.request("clearTrack", **wire.clear_track_args(before))

    def start_monitoring(self, places: Optional[Sequence[str]] = None) -> List[str]:
        """Adds places to this connection's monitored ones (every place it
        sees when None); returns the names now monitored."""
        return wire.place_names(self.request("startMonitoring", **wire.monitoring_args(places)), "startMonitoring")

    def stop_monitoring(self, places: Optional[Sequence[str]] = None) -> List[str]:
        """Stops monitoring ``places`` (all when None); returns the names still monitored."""
        return wire.place_names(self.request("stopMonitoring", **wire.monitoring_args(places)), "stopMonitoring")

    def start_monitoring_visits(self) -> None:
        """``startMonitoringVisits``: ``didVisit`` events come through
        ``events()`` (read them with ``Visit.from_event``); ``monitor_visits``
        does both."""
        self.request("startMonitoringVisits")

    def stop_monitoring_visits(self) -> None:
        self.request("stopMonitoringVisits")

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
