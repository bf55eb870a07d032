"""The events of one connection, handed to its iterators without I/O
(docs/clients.md, "Iterators and their queues"). Each iterator has its own
bounded queue, so ``watch()`` and ``observe()`` on one client never take
each other's events, and one that falls behind ends with EventOverflow
instead of growing the process. Both clients drive this one router."""

import collections
from typing import Callable, Deque, List, Optional

from .errors import AklocError, EventOverflow
from .models import Event

__all__ = ["DEFAULT_QUEUE_SIZE", "Accepts", "Consumer", "Router", "check_queue_size"]

#: Events an iterator may hold that it has not taken yet: 17 minutes of a
#: 1 Hz watch, or the first-fix and notification bursts many times over.
DEFAULT_QUEUE_SIZE = 1024


def check_queue_size(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"queue_size must be a whole number of events, at least 1, not {value!r}")
    return value


Accepts = Callable[[Event], bool]


def every_event(event: Event) -> bool:
    return True


class Consumer:
    """One iterator's queue: the events it accepts, in order, at most
    ``limit`` of them; then the error that ends it (an overflow, or the
    connection's end), raised once the events before it are taken."""

    def __init__(self, label: str, accepts: Accepts, limit: int, wake: Optional[Callable[[], None]]) -> None:
        self.label = label
        self._accepts = accepts
        self._limit = limit
        self._wake = wake
        self._queue: Deque[Event] = collections.deque()
        self._ending: Optional[AklocError] = None

    @property
    def pending(self) -> int:
        return len(self._queue)

    def offer(self, event: Event) -> bool:
        """Queues ``event`` if this consumer wants it; False if it does not."""
        if not self._accepts(event):
            return False
        if self._ending is not None:
            return True
        if len(self._queue) >= self._limit:
            # Nothing after the gap is delivered, so what was yielded is never followed by a silent hole.
            self.end(
                EventOverflow(
                    f"{self.label} fell {self._limit} events behind (queue_size); the events after those "
                    f"were dropped, so it ends here"
                )
            )
            return True
        self._queue.append(event)
        if self._wake is not None:
            self._wake()
        return True

    def end(self, error: AklocError) -> None:
        """Ends the queue after what it holds; the first reason stays."""
        if self._ending is None:
            self._ending = error
            if self._wake is not None:
                self._wake()

    def take(self) -> Optional[Event]:
        """The oldest event, or None when there is none yet; raises the
        ending once the queue is empty."""
        if self._queue:
            return self._queue.popleft()
        if self._ending is not None:
            raise self._ending
        return None


class Router:
    """Every consumer of a connection, and the events none of them took
    (the backlog, for the next ``events()``: say the notifications
    answering a ``request`` made before it). The backlog keeps the newest
    ``limit``: nobody asked for those yet."""

    def __init__(self, limit: int) -> None:
        self.limit = check_queue_size(limit)
        self._consumers: List[Consumer] = []
        self._backlog: Deque[Event] = collections.deque(maxlen=limit)
        # Set from the connection's end until the next connection, so an iterator started in between ends at once.
        self._failure: Optional[AklocError] = None

    @property
    def consumers(self) -> int:
        return len(self._consumers)

    def add(
        self, label: str, accepts: Optional[Accepts] = None, wake: Optional[Callable[[], None]] = None
    ) -> Consumer:
        """A new consumer. One that accepts every event (``events()``)
        starts with the backlog; any other wants only what answers the
        request it sends after this."""
        consumer = Consumer(label, accepts or every_event, self.limit, wake)
        if self._failure is not None:
            consumer.end(self._failure)
        elif accepts is None:
            for event in self._backlog:
                consumer.offer(event)
            self._backlog.clear()
        self._consumers.append(consumer)
        return consumer

    def remove(self, consumer: Consumer) -> None:
        if consumer in self._consumers:
            self._consumers.remove(consumer)

    def dispatch(self, event: Event) -> None:
        taken = False
        for consumer in self._consumers:
            taken = consumer.offer(event) or taken
        if not taken:
            self._backlog.append(event)

    def fail(self, error: AklocError) -> None:
        """The connection ended: every consumer ends after what it holds."""
        self._failure = self._failure or error
        self._backlog.clear()
        for consumer in self._consumers:
            consumer.end(error)

    def reset(self) -> None:
        """A new connection: the old one's backlog is not its events."""
        self._failure = None
        self._backlog.clear()
