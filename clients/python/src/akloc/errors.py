"""Errors: each carries a stable ``code`` (the wire code of docs/protocol.md §8
for a daemon's error reply) and a ``message`` for people."""

from typing import Dict, Type

__all__ = [
    "AklocError",
    "ConnectionLost",
    "LocalTimeout",
    "EventOverflow",
    "ProtocolViolation",
    "RequestError",
    "BadJSON",
    "BadRequest",
    "UnknownOp",
    "UnknownKeyPath",
    "LineTooLong",
    "NotAuthorized",
    "Forbidden",
    "Unavailable",
    "Timeout",
    "NotFound",
    "StorageFailed",
    "InternalError",
    "error_for_code",
]


class AklocError(Exception):
    """Base of every error this package raises."""

    code = "error"

    def __init__(self, message: str, code: str = "") -> None:
        super().__init__(message)
        self.message = message
        if code:
            self.code = code

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class ConnectionLost(AklocError):
    """aklocd could not be reached, or closed the connection."""

    code = "connection"


class LocalTimeout(AklocError, TimeoutError):
    """A wait of this client passed its bound: no reply, no hello, or no
    event for an iterator within its ``timeout``. It is the built-in
    ``TimeoutError`` too, so ``except TimeoutError`` catches it; the
    connection stays usable. (``Timeout`` is the daemon's error reply.)"""

    code = "localTimeout"


class EventOverflow(AklocError):
    """An iterator fell so far behind that its queue was full: it has
    yielded every event it kept and ends here, because the ones after are
    gone. The other iterators and requests of the client go on."""

    code = "overflow"


class ProtocolViolation(AklocError):
    """aklocd sent something that is not the protocol: garbage, an unknown
    protocol version, a line cut off by the connection closing."""

    code = "badMessage"


class RequestError(AklocError):
    """aklocd answered a request with an error reply; ``code`` is the wire code."""


class BadJSON(RequestError):
    code = "badJSON"


class BadRequest(RequestError):
    code = "badRequest"


class UnknownOp(RequestError):
    code = "unknownOp"


class UnknownKeyPath(RequestError):
    code = "unknownKeyPath"


class LineTooLong(RequestError):
    code = "lineTooLong"


class NotAuthorized(RequestError):
    code = "notAuthorized"


class Forbidden(RequestError):
    code = "forbidden"


class Unavailable(RequestError):
    code = "unavailable"


class Timeout(RequestError):
    code = "timeout"


class NotFound(RequestError):
    code = "notFound"


class StorageFailed(RequestError):
    """A saved place could not be written; nothing changed (docs/places.md)."""

    code = "storageFailed"


class InternalError(RequestError):
    code = "internalError"


_BY_CODE: Dict[str, Type[RequestError]] = {
    cls.code: cls
    for cls in (
        BadJSON,
        BadRequest,
        UnknownOp,
        UnknownKeyPath,
        LineTooLong,
        NotAuthorized,
        Forbidden,
        Unavailable,
        Timeout,
        NotFound,
        StorageFailed,
        InternalError,
    )
}


def error_for_code(code: str, message: str) -> RequestError:
    """The exception for an error reply; a code this version does not know
    (from a newer daemon) is a plain ``RequestError`` carrying it."""
    cls = _BY_CODE.get(code)
    if cls is None:
        return RequestError(message, code=code)
    return cls(message)
