"""The asyncio client: the same calls as ``akloc.Client``, awaited.

    async with akloc.aio.connect() as client:
        async for location in client.watch(min_interval=5):
            print(location.latitude, location.longitude)
"""

import asyncio
from typing import Any, AsyncIterator, Dict, Generator, List, Optional, Sequence, Tuple, Type

from . import _protocol as wire
from ._router import DEFAULT_QUEUE_SIZE, Accepts, Consumer, Router, check_queue_size
from .errors import AklocError, ConnectionLost, LocalTimeout
from .models import Change, Event, Location, RegionEvent, TrackPage, TrackPoint, Visit

__all__ = ["Client", "Connecting", "connect"]


def connect(
    socket: Optional[str] = None, timeout: float = 30.0, queue_size: int = DEFAULT_QUEUE_SIZE
) -> "Connecting":
    """Connects to aklocd: ``async with connect() as client:`` closes the
    client at the end of the block; ``client = await connect()`` leaves
    that to you. Waits (up to ``timeout`` s) for the daemon's hello."""
    return Client.connect(socket, timeout, queue_size)


class Connecting:
    """What ``connect()`` returns: awaitable, and an async context manager."""

    def __init__(self, cls: Type["Client"], path: str, timeout: float, queue_size: int) -> None:
        self._cls = cls
        self._path = path
        self._timeout = timeout
        self._queue_size = check_queue_size(queue_size)
        self._client: Optional[Client] = None

    async def _connect(self) -> "Client":
        client = self._cls(self._path, self._timeout, self._queue_size)
        await client._open()
        return client

    def __await__(self) -> Generator[Any, None, "Client"]:
        return self._connect().__await__()

    async def __aenter__(self) -> "Client":
        self._client = await self._connect()
        return self._client

    async def __aexit__(self, *exc: Any) -> None:
        if self._client is not None:
            await self._client.close()


class Client:
    """One connection to aklocd; make it with ``connect(socket)``.

    A reader task owns the socket: replies resolve their request's future,
    events go to the queue of each iterator that wants them (at most
    ``queue_size`` each; one that falls that far behind ends with
    ``EventOverflow``). When the connection ends (or aklocd sends garbage)
    every waiter gets the error. Waits that pass their bound raise
    ``TimeoutError`` (``akloc.LocalTimeout``).
    """

    def __init__(self, path: str, timeout: float, queue_size: int = DEFAULT_QUEUE_SIZE) -> None:
        self.path = path
        self.timeout = timeout
        self._router = Router(queue_size)
        self._session = wire.Session()
        self._writer: Optional[asyncio.StreamWriter] = None
        self._replies: Dict[int, "asyncio.Future[wire.Reply]"] = {}
        self._hello: "asyncio.Future[wire.Hello]" = asyncio.get_running_loop().create_future()
        self._task: Optional["asyncio.Task[None]"] = None
        self._failure: Optional[AklocError] = ConnectionLost("the client is not connected")
        # Counts connections, so an iterator of a lost one does not clean up on its successor.
        self._generation = 0
        self._closed = False
        self._reconnecting = asyncio.Lock()

    @classmethod
    def connect(
        cls, socket: Optional[str] = None, timeout: float = 30.0, queue_size: int = DEFAULT_QUEUE_SIZE
    ) -> Connecting:
        """As the module's ``connect()``."""
        return Connecting(cls, socket or wire.default_socket(), timeout, queue_size)

    # -- connection ---------------------------------------------------------

    async def _open(self) -> None:
        """Connects and waits (up to ``timeout`` s) for the hello."""
        try:
            reader, writer = await asyncio.open_unix_connection(self.path)
        except OSError as error:
            raise ConnectionLost(f"cannot connect to aklocd at {self.path}: {error.strerror or error}") from None
        self._session = wire.Session()
        self._writer = writer
        self._replies = {}
        self._hello = asyncio.get_running_loop().create_future()
        self._failure = None
        self._router.reset()
        self._generation += 1
        self._task = asyncio.get_running_loop().create_task(self._read_loop(reader))
        try:
            await asyncio.wait_for(asyncio.shield(self._hello), self.timeout)
        except asyncio.TimeoutError:
            timed_out = LocalTimeout(f"aklocd at {self.path} did not say hello within {self.timeout} s")
            # Cancelled, not failed: nobody is left to read an exception set on it.
            self._hello.cancel()
            await self._shutdown(timed_out)
            raise timed_out from None
        except AklocError as error:
            await self._shutdown(error)
            raise

    async def _reconnect(self, generation: int, backoff: wire.Backoff) -> None:
        """Connects again after connection ``generation`` was lost, waiting
        ``backoff`` before each attempt; once for all the iterators that lost it."""
        async with self._reconnecting:
            if self._generation != generation and self._failure is None:
                return
            await self._shutdown(ConnectionLost("the connection was lost"))
            while True:
                await asyncio.sleep(backoff.next())
                if self._closed:
                    raise ConnectionLost("the client is closed")
                try:
                    await self._open()
                    return
                except (ConnectionLost, LocalTimeout):
                    continue

    async def _shutdown(self, error: AklocError) -> None:
        self._fail(error)
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            try:
                await task
            except (asyncio.CancelledError, Exception):
                pass
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()
            try:
                await writer.wait_closed()
            except OSError:
                pass

    async def close(self) -> None:
        self._closed = True
        await self._shutdown(ConnectionLost("the client is closed"))

    async def __aenter__(self) -> "Client":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    @property
    def hello(self) -> wire.Hello:
        assert self._session.hello is not None
        return self._session.hello

    @property
    def authorization_status(self) -> str:
        return self.hello.authorization_status

    async def _read_loop(self, reader: asyncio.StreamReader) -> None:
        session = self._session
        try:
            while True:
                try:
                    data = await reader.read(65536)
                except ConnectionResetError:
                    data = b""
                if not data:
                    raise session.closed(self.path)
                for message in session.receive(data):
                    if isinstance(message, wire.Hello):
                        self._hello.set_result(message)
                    elif isinstance(message, wire.Reply):
                        future = self._replies.pop(message.id, None) if isinstance(message.id, int) else None
                        if future is not None and not future.done():
                            future.set_result(message)
                    else:
                        self._router.dispatch(message)
        except AklocError as error:
            self._fail(error)
        except OSError as error:
            self._fail(ConnectionLost(f"reading from aklocd at {self.path}: {error.strerror or error}"))

    def _fail(self, error: AklocError) -> None:
        if self._failure is not None:
            return
        self._failure = error
        if not self._hello.done():
            self._hello.set_exception(error)
        for future in self._replies.values():
            if not future.done():
                future.set_exception(error)
        self._replies.clear()
        self._router.fail(error)

    async def _next_event(self, subscriber: "_Subscriber", timeout: Optional[float]) -> Event:
        """The consumer's next event; ``timeout`` bounds the wait."""
        while True:
            event = subscriber.consumer.take()
            if event is not None:
                return event
            subscriber.ready.clear()
            try:
                await asyncio.wait_for(subscriber.ready.wait(), timeout)
            except asyncio.TimeoutError:
                label = subscriber.consumer.label
                raise LocalTimeout(f"aklocd at {self.path} sent {label} nothing within {timeout} s") from None

    # -- requests -----------------------------------------------------------

    async def request(self, op: str, reply_timeout: Optional[float] = None, **arguments: Any) -> Any:
        """Sends any op and returns its result; an error reply raises its typed exception."""
        if self._failure is not None:
            raise self._failure
        assert self._writer is not None
        request_id, line = self._session.request(op, arguments)
        future: "asyncio.Future[wire.Reply]" = asyncio.get_running_loop().create_future()
        self._replies[request_id] = future
        try:
            self._writer.write(line)
            await self._writer.drain()
        except OSError as error:
            # The reader task sees the end of the connection and says why.
            if self._task is not None:
                await asyncio.wait([self._task], timeout=1.0)
            self._fail(ConnectionLost(f"writing to aklocd at {self.path}: {error.strerror or error}"))
        wait = self.timeout if reply_timeout is None else reply_timeout
        try:
            reply = await asyncio.wait_for(future, wait)
        except asyncio.TimeoutError:
            self._replies.pop(request_id, None)
            raise LocalTimeout(f"aklocd did not answer {op} within {wait} s") from None
        return reply.value()

    async def get(self, key_path: str) -> Any:
        """As ``Client.get``."""
        return wire.value_of(key_path, await self.request("get", keyPath=key_path))

    async def status(self) -> Dict[str, Any]:
        return wire.as_object(await self.request("status"), "status")

    async def request_location(self, timeout: float = 10.0) -> Location:
        return Location.from_json(await self.request("requestLocation", reply_timeout=timeout + 5, timeout=timeout))

    async def request_authorization(self, type: str = "whenInUse") -> str:
        return wire.authorization_of(await self.request("requestAuthorization", type=type))

    async def configure(
        self,
        min_interval: Optional[float] = None,
        max_interval: Optional[float] = None,
        speed: Optional[float] = None,
        distance: Optional[float] = None,
        accuracy: Optional[float] = None,
    ) -> None:
        """As ``Client.configure``."""
        await self.request("configure", policy=wire.policy(min_interval, max_interval, speed, distance, accuracy) or {})

    async def pause(self) -> None:
        await self.request("pause")

    async def resume(self) -> None:
        await self.request("resume")

    async def reload(self) -> None:
        await self.request("reload")

    async def authorize(self, subject: str, status: str) -> None:
        await self.request("authorize", subject=subject, status=status)

    # -- streams ------------------------------------------------------------

    async def events(self, timeout: Optional[float] = None) -> AsyncIterator[Event]:
        """As ``Client.events``; the connection's end raises its error."""
        subscriber = _Subscriber(self._router, "events()", None)
        try:
            while True:
                yield await self._next_event(subscriber, timeout)
        finally:
            self._router.remove(subscriber.consumer)

    async def watch(
        self,
        min_interval: Optional[float] = None,
        max_interval: Optional[float] = None,
        speed: Optional[float] = None,
        distance: Optional[float] = None,
        accuracy: Optional[float] = None,
        every_epoch: bool = False,
        timeout: Optional[float] = None,
        reconnect: bool = False,
    ) -> AsyncIterator[Location]:
        """Starts updates and yields each delivered location (as ``Client.watch``,
        ``reconnect`` included)."""
        start = wire.watch_request(min_interval, max_interval, speed, distance, accuracy, every_epoch)
        stop: wire.Call = ("stopUpdatingLocation", {})
        backoff = wire.Backoff()
        while True:
            generation = self._generation
            try:
                async with _Subscription(self, "watch()", start, stop, wire.is_location_update) as subscriber:
                    while True:
                        location = (await self._next_event(subscriber, timeout)).location
                        backoff.reset()
                        if location is not None:
                            yield location
            except ConnectionLost:
                if not reconnect or self._closed:
                    raise
            await self._reconnect(generation, backoff)

    async def observe(
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
    ) -> AsyncIterator[Change]:
        """As ``Client.observe``."""
        start = wire.observe_request(key_path, initial, old, min_interval, max_interval, speed, distance, accuracy)
        stop: wire.Call = ("unobserve", {"keyPath": key_path})
        label, accepts = f"observe({key_path!r})", wire.is_change_of(key_path)
        async with _Subscription(self, label, start, stop, accepts) as subscriber:
            while True:
                yield wire.change_of(await self._next_event(subscriber, timeout))

    async def monitor(
        self, places: Optional[Sequence[str]] = None, timeout: Optional[float] = None
    ) -> AsyncIterator[RegionEvent]:
        """As ``Client.monitor``."""
        arguments = wire.monitoring_args(places)
        start, stop = ("startMonitoring", arguments), ("stopMonitoring", arguments)
        async with _Subscription(self, "monitor()", start, stop, wire.is_region_event_of(places)) as subscriber:
            while True:
                yield RegionEvent.from_event(await self._next_event(subscriber, timeout))

    async def monitor_visits(self, timeout: Optional[float] = None) -> AsyncIterator[Visit]:
        """As ``Client.monitor_visits``."""
        start: wire.Call = ("startMonitoringVisits", {})
        stop: wire.Call = ("stopMonitoringVisits", {})
        async with _Subscription(self, "monitor_visits()", start, stop, wire.is_visit) as subscriber:
            while True:
                yield Visit.from_event(await self._next_event(subscriber, timeout))

    # -- track and regions (docs/track.md, docs/places.md) -------------------

    async def track(
        self,
        since: Optional[wire.TrackTime] = None,
        until: Optional[wire.TrackTime] = None,
        limit: Optional[int] = None,
        after: Optional[str] = None,
        simplify: Optional[float] = None,
    ) -> TrackPage:
        """As ``Client.track``."""
        arguments = wire.track_args(since, until, limit, after, simplify)
        return TrackPage.from_json(await self.request("track", **arguments))

    async def track_points(
        self,
        since: Optional[wire.TrackTime] = None,
        until: Optional[wire.TrackTime] = None,
        simplify: Optional[float] = None,
        page_size: Optional[int] = None,
    ) -> AsyncIterator[TrackPoint]:
        """As ``Client.track_points``."""
        after: Optional[str] = None
        while True:
            page = await self.track(since, until, page_size, after, simplify)
            for point in page.points:
                yield point
            if page.next is None:
                return
            after = page.next

    async def clear_track(self, before: Optional[wire.TrackTime] = None) -> None:
        await self.request("clearTrack", **wire.clear_track_args(before))

    async def start_monitoring(self, places: Optional[Sequence[str]] = None) -> List[str]:
        result = await self.request("startMonitoring", **wire.monitoring_args(places))
        return wire.place_names(result, "startMonitoring")

    async def stop_monitoring(self, places: Optional[Sequence[str]] = None) -> List[str]:
        result = await self.request("stopMonitoring", **wire.monitoring_args(places))
        return wire.place_names(result, "stopMonitoring")

    async def start_monitoring_visits(self) -> None:
        await self.request("startMonitoringVisits")

    async def stop_monitoring_visits(self) -> None:
        await self.request("stopMonitoringVisits")

    # -- places and countries (DESIGN §9) ----------------------------------

    async def reverse_geocode(
        self, latitude: Optional[float] = None, longitude: Optional[float] = None
    ) -> Dict[str, Any]:
        result = await self.request("reverseGeocode", **wire.reverse_geocode_args(latitude, longitude))
        return wire.member_object(result, "placemark", "reverseGeocode")

    async def search_places(
        self,
        query: str,
        near: Optional[Tuple[float, float]] = None,
        within: Optional[float] = None,
        limit: Optional[int] = None,
    ) -> List[Dict[str, Any]]:
        result = await self.request("searchPlaces", **wire.search_places_args(query, near, within, limit))
        return wire.placemarks(result)

    async def countries(
        self,
        code: Optional[str] = None,
        phone_code: Optional[str] = None,
        query: Optional[str] = None,
        locale: Optional[str] = None,
    ) -> List[Dict[str, Any]]:
        result = await self.request("countries", **wire.countries_args(code, phone_code, query, locale))
        return wire.member_list(result, "countries", "countries")

    async def save_place(
        self,
        name: str,
        latitude: Optional[float] = None,
        longitude: Optional[float] = None,
        radius: Optional[float] = None,
        note: Optional[str] = None,
        shared: Optional[bool] = None,
    ) -> Dict[str, Any]:
        arguments = wire.save_place_args(name, latitude, longitude, radius, note, shared)
        return wire.member_object(await self.request("savePlace", **arguments), "place", "savePlace")

    async def places(self) -> List[Dict[str, Any]]:
        return wire.member_list(await self.request("places"), "places", "places")

    async def delete_place(self, name: str) -> None:
        await self.request("deletePlace", name=name)


class _Subscriber:
    """An iterator's consumer and the event that wakes it."""

    def __init__(self, router: Router, label: str, accepts: Optional[Accepts]) -> None:
        self.ready = asyncio.Event()
        self.consumer = router.add(label, accepts, self.ready.set)


class _Subscription:
    """``async with``: a consumer registered before ``start`` is sent, so it
    misses nothing that answers it; at the end ``stop`` is sent on the same
    connection, if it is still there. (A class, not an async generator, so
    no generator of its own is left for the loop to finalize.)"""

    def __init__(self, client: Client, label: str, start: wire.Call, stop: wire.Call, accepts: Accepts) -> None:
        self._client = client
        self._label = label
        self._start = start
        self._stop = stop
        self._accepts = accepts
        self._generation = client._generation

    async def __aenter__(self) -> _Subscriber:
        self._subscriber = _Subscriber(self._client._router, self._label, self._accepts)
        try:
            await self._client.request(self._start[0], **self._start[1])
        except BaseException:
            self._client._router.remove(self._subscriber.consumer)
            raise
        return self._subscriber

    async def __aexit__(self, *exc: Any) -> None:
        client = self._client
        client._router.remove(self._subscriber.consumer)
        if client._failure is None and client._generation == self._generation:
            try:
                await client.request(self._stop[0], reply_timeout=min(client.timeout, 5.0), **self._stop[1])
            except AklocError:
                pass
