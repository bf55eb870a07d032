"""The asyncio client: the same calls as ``akloc.Client``, awaited.

    async with await akloc.aio.Client.connect() as client:
        async for location in client.watch(min_interval=5):
            print(location.latitude, location.longitude)
"""

import asyncio
from typing import Any, AsyncIterator, Dict, List, Optional, Tuple

from . import _protocol as wire
from .errors import AklocError, ConnectionLost
from .models import Change, Event, Location

__all__ = ["Client"]


class Client:
    """One connection to aklocd; make it with ``await Client.connect(socket)``.

    A reader task owns the socket: replies resolve their request's future,
    events queue up for ``events()``, ``watch()`` and ``observe()``. When the
    connection ends (or aklocd sends garbage) every waiter gets the error.
    """

    def __init__(self, path: str, timeout: float) -> None:
        self.path = path
        self.timeout = timeout
        self._session = wire.Session()
        self._reader: Optional[asyncio.StreamReader] = None
        self._writer: Optional[asyncio.StreamWriter] = None
        self._replies: Dict[int, "asyncio.Future[wire.Reply]"] = {}
        self._events: "asyncio.Queue[Any]" = asyncio.Queue()
        self._hello: "asyncio.Future[wire.Hello]" = asyncio.get_running_loop().create_future()
        self._task: Optional["asyncio.Task[None]"] = None
        self._failure: Optional[AklocError] = None

    @classmethod
    async def connect(cls, socket: Optional[str] = None, timeout: float = 30.0) -> "Client":
        """Connects and waits (up to ``timeout`` s) for the daemon's hello."""
        client = cls(socket or wire.default_socket(), timeout)
        try:
            client._reader, client._writer = await asyncio.open_unix_connection(client.path)
        except OSError as error:
            raise ConnectionLost(f"cannot connect to aklocd at {client.path}: {error.strerror or error}") from None
        client._task = asyncio.get_running_loop().create_task(client._read_loop())
        try:
            await asyncio.wait_for(asyncio.shield(client._hello), timeout)
        except asyncio.TimeoutError:
            await client.close()
            raise ConnectionLost(f"aklocd at {client.path} did not say hello within {timeout} s") from None
        except AklocError:
            await client.close()
            raise
        return client

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except (asyncio.CancelledError, Exception):
                pass
            self._task = None
        if self._writer is not None:
            self._writer.close()
            try:
                await self._writer.wait_closed()
            except OSError:
                pass
            self._writer = None
        self._fail(ConnectionLost("the client is closed"))

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

    async def _read_loop(self) -> None:
        assert self._reader is not None
        try:
            while True:
                try:
                    data = await self._reader.read(65536)
                except ConnectionResetError:
                    data = b""
                if not data:
                    raise self._session.closed(self.path)
                for message in self._session.receive(data):
                    if isinstance(message, wire.Hello):
                        self._hello.set_result(message)
                    elif isinstance(message, wire.Reply):
                        future = self._replies.pop(message.id, None) if isinstance(message.id, int) else None
                        if future is not None and not future.done():
                            future.set_result(message)
                    else:
                        self._events.put_nowait(message)
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
        # Wakes a consumer of events() so it sees the error.
        self._events.put_nowait(error)

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
            raise ConnectionLost(f"aklocd did not answer {op} within {wait} s") from None
        return reply.value()

    async def get(self, key_path: str) -> Any:
        value = await self.request("get", keyPath=key_path)
        if key_path in ("myLocation", "rawLocation") and value is not None:
            return Location.from_json(value)
        return value

    async def status(self) -> Dict[str, Any]:
        return wire.as_object(await self.request("status"), "status")

    async def request_location(self, timeout: float = 10.0) -> Location:
        return Location.from_json(await self.request("requestLocation", reply_timeout=timeout + 5, timeout=timeout))

    async def request_authorization(self, type: str = "whenInUse") -> str:
        result = await self.request("requestAuthorization", type=type)
        return str(result.get("authorizationStatus", "")) if isinstance(result, dict) else ""

    # -- streams ------------------------------------------------------------

    async def events(self, timeout: Optional[float] = None) -> AsyncIterator[Event]:
        """Every event; the connection's end raises its error."""
        while True:
            try:
                item = await asyncio.wait_for(self._events.get(), timeout)
            except asyncio.TimeoutError:
                raise ConnectionLost(f"aklocd at {self.path} sent nothing within {timeout} s") from None
            if isinstance(item, AklocError):
                self._events.put_nowait(item)
                raise item
            yield item

    async def watch(
        self,
        min_interval: Optional[float] = None,
        max_interval: Optional[float] = None,
        speed: Optional[float] = None,
        distance: Optional[float] = None,
        accuracy: Optional[float] = None,
        every_epoch: bool = False,
        timeout: Optional[float] = None,
    ) -> AsyncIterator[Location]:
        """Starts updates and yields each delivered location (as ``Client.watch``)."""
        await self.request(
            "startUpdatingLocation",
            policy=wire.policy(min_interval, max_interval, speed, distance, accuracy),
            everyEpoch=True if every_epoch else None,
        )
        try:
            async for event in self.events(timeout):
                if event.name == "didUpdateLocation":
                    location = event.location
                    if location is not None:
                        yield location
        finally:
            if self._failure is None:
                try:
                    await self.request("stopUpdatingLocation", reply_timeout=5.0)
                except AklocError:
                    pass

    async def observe(
        self,
        key_path: str,
        initial: bool = True,
        old: bool = False,
        min_interval: Optional[float] = None,
        max_interval: Optional[float] = None,
        timeout: Optional[float] = None,
    ) -> AsyncIterator[Change]:
        options = [name for name, chosen in (("initial", initial), ("old", old)) if chosen]
        await self.request(
            "observe",
            keyPath=key_path,
            options=options or None,
            policy=wire.policy(min_interval, max_interval),
        )
        try:
            async for event in self.events(timeout):
                if event.name == "change" and event.fields.get("keyPath") == key_path:
                    yield wire.change_of(event)
        finally:
            if self._failure is None:
                try:
                    await self.request("unobserve", reply_timeout=5.0, keyPath=key_path)
                except AklocError:
                    pass

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
