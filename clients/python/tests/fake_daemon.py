"""A scripted stand-in for aklocd on a real Unix socket, for request shapes
and bad input. It speaks raw bytes so tests can send what aklocd never would."""

import json
import os
import socket
import tempfile
import threading
from typing import Callable, List, Optional

HELLO = b'{"event":"hello","protocol":1,"version":"0.1.0","authorizationStatus":"authorizedAlways"}\n'

# What the fake answers for one request (a parsed object): the bytes to send
# back, or None to close the connection.
Handler = Callable[[dict], Optional[bytes]]


class Closing(bytes):
    """An answer after which the fake closes the connection (then accepts the next)."""


def reply(request: dict, result: object = None) -> bytes:
    return json.dumps({"id": request.get("id"), "ok": True, "result": result}).encode() + b"\n"


def event_line(event: dict) -> bytes:
    return json.dumps(event).encode() + b"\n"


def error(request: dict, code: str, message: str) -> bytes:
    body = {"id": request.get("id"), "ok": False, "error": {"code": code, "message": message}}
    return json.dumps(body).encode() + b"\n"


class FakeDaemon:
    """Accepts one connection at a time; sends ``greeting`` on connect (and
    closes, with ``then_close``), then answers each request line with
    ``handler``. Every request is kept, and how many connections there were."""

    def __init__(self, handler: Optional[Handler] = None, greeting: bytes = HELLO, then_close: bool = False) -> None:
        self.then_close = then_close
        self.directory = tempfile.mkdtemp(prefix="akloc-fake-")
        self.path = os.path.join(self.directory, "akloc.sock")
        self.requests: List[dict] = []
        self.connections = 0
        self.handler = handler or (lambda request: reply(request))
        self.greeting = greeting
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(self.path)
        self._listener.listen(4)
        self._stopped = False
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        self._listener.settimeout(0.1)
        while not self._stopped:
            try:
                connection, _ = self._listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            self.connections += 1
            with connection:
                try:
                    self._handle(connection)
                except OSError:
                    pass

    def _handle(self, connection: socket.socket) -> None:
        connection.settimeout(None)
        connection.sendall(self.greeting)
        if self.then_close:
            return
        buffer = b""
        while True:
            data = connection.recv(65536)
            if not data:
                return
            buffer += data
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                request = json.loads(line)
                self.requests.append(request)
                answer = self.handler(request)
                if answer is None:
                    return
                connection.sendall(answer)
                if isinstance(answer, Closing):
                    return

    def stop(self) -> None:
        self._stopped = True
        self._thread.join(timeout=5)
        self._listener.close()
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
        os.rmdir(self.directory)

    def __enter__(self) -> "FakeDaemon":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
