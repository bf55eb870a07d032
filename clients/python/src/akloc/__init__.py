"""Client for aklocd, the akloc location daemon (docs/clients.md).

    import akloc

    with akloc.Client() as client:
        print(client.request_location())

``akloc.aio`` has the same calls for asyncio.
"""

from ._protocol import DEFAULT_SOCKET, PROTOCOL_VERSION, Hello, default_socket
from ._router import DEFAULT_QUEUE_SIZE
from .client import Client
from .errors import (
    AklocError,
    BadJSON,
    BadRequest,
    ConnectionLost,
    EventOverflow,
    Forbidden,
    InternalError,
    LineTooLong,
    LocalTimeout,
    NotAuthorized,
    NotFound,
    ProtocolViolation,
    RequestError,
    StorageFailed,
    Timeout,
    Unavailable,
    UnknownKeyPath,
    UnknownOp,
)
from .models import Change, Event, Location, RegionEvent, TrackPage, TrackPoint, Visit

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_QUEUE_SIZE",
    "DEFAULT_SOCKET",
    "PROTOCOL_VERSION",
    "AklocError",
    "BadJSON",
    "BadRequest",
    "Change",
    "Client",
    "ConnectionLost",
    "Event",
    "EventOverflow",
    "Forbidden",
    "Hello",
    "InternalError",
    "LineTooLong",
    "LocalTimeout",
    "Location",
    "NotAuthorized",
    "NotFound",
    "ProtocolViolation",
    "RegionEvent",
    "RequestError",
    "StorageFailed",
    "Timeout",
    "TrackPage",
    "TrackPoint",
    "Unavailable",
    "UnknownKeyPath",
    "UnknownOp",
    "Visit",
    "default_socket",
]
