"""Client for aklocd, the akloc location daemon (docs/clients.md).

    import akloc

    with akloc.Client() as client:
        print(client.request_location())

``akloc.aio`` has the same calls for asyncio.
"""

from ._protocol import DEFAULT_SOCKET, PROTOCOL_VERSION, Hello, default_socket
from .client import Client
from .errors import (
    AklocError,
    BadJSON,
    BadRequest,
    ConnectionLost,
    Forbidden,
    InternalError,
    LineTooLong,
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
from .models import Change, Event, Location

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_SOCKET",
    "PROTOCOL_VERSION",
    "AklocError",
    "BadJSON",
    "BadRequest",
    "Change",
    "Client",
    "ConnectionLost",
    "Event",
    "Forbidden",
    "Hello",
    "InternalError",
    "LineTooLong",
    "Location",
    "NotAuthorized",
    "NotFound",
    "ProtocolViolation",
    "RequestError",
    "StorageFailed",
    "Timeout",
    "Unavailable",
    "UnknownKeyPath",
    "UnknownOp",
    "default_socket",
]
