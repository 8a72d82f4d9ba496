"""Tables, replays and a memory's map made once per trace (or memory), not on every rerun.

They depend only on the objects they come from and a few view options (a typed picture's layout
and drawing are kept by value in memrag.viz: layout, figure). `drawn` and `made` keep results in
one bounded, process-wide LRU keyed by the identity of the objects they come from (a trace, an
opened memory, an evaluation run) and the options; a new ask makes new traces and so new entries,
and the oldest entries go first.
"""

from __future__ import annotations

import contextvars
import logging
import threading
import weakref
from collections import OrderedDict, deque
from typing import Any, Callable, Hashable, TypeVar

from memrag.viz import look as looks

T = TypeVar("T")
log = logging.getLogger(__name__)

MAX_ENTRIES = 256  # a few asks of four methods with their tables and replays, a memory's map


class IdentityMemo:
    """A bounded LRU of values computed from objects, keyed by the objects' identity and plain
    options (hashable); thread-safe (Streamlit runs sessions in threads).

    An object that can be watched (a trace, a memory) is not kept alive by its entries: when it is
    collected, its entries go at the next lookup, so a new object at the same address never meets
    them, and a replaced ask or memory frees its pictures with it. Objects that cannot be watched
    (dicts, tuples) are held by their entries instead."""

    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self.max_entries = max_entries
        self._items: OrderedDict[tuple, tuple[tuple, Any]] = OrderedDict()
        self._watched: dict[int, weakref.finalize] = {}
        self._dead: deque[int] = deque()  # ids of collected objects, appended by their finalizers
        self._lock = threading.Lock()
        self._making: dict[tuple, threading.Event] = {}  # keys being made now, set when made (or failed)
        self.hits = self.misses = 0

    def _purge(self) -> None:
        """Forget the entries of collected objects (called with the lock held)."""
        if not self._dead:
            return
        dead = set()
        while self._dead:
            dead.add(self._dead.popleft())
        for i in dead:
            self._watched.pop(i, None)
        for key in [k for k in self._items if dead.intersection(k[0])]:
            del self._items[key]

    def _hold(self, objects: tuple[Any, ...]) -> tuple[Any, ...]:
        """What an entry must keep alive: the objects that cannot be watched (lock held)."""
        held = []
        for o in objects:
            if id(o) in self._watched or o is None:
                continue
            try:
                self._watched[id(o)] = weakref.finalize(o, self._dead.append, id(o))
            except TypeError:  # no weak references to dicts, tuples, …
                held.append(o)
        return tuple(held)

    def get(self, objects: tuple[Any, ...], options: Hashable, make: Callable[[], T]) -> T:
        key = (tuple(id(o) for o in objects), options)
        while True:
            with self._lock:
                self._purge()
                held = self._items.get(key)
                if held is not None:
                    self._items.move_to_end(key)
                    self.hits += 1
                    return held[1]
                making = self._making.get(key)
                if making is None:  # ours to make
                    making = self._making[key] = threading.Event()
                    break
            # another thread (a prefetch, another session) is making it: its value, not a second
            # make competing for the same two cores; if that make failed, the loop makes it here
            making.wait()
        try:
            value = make()  # outside the lock: other keys are made and read meanwhile
            with self._lock:
                self._purge()
                self.misses += 1
                self._items[key] = (self._hold(objects), value)
                self._items.move_to_end(key)
                while len(self._items) > self.max_entries:
                    self._items.popitem(last=False)
        finally:
            with self._lock:
                del self._making[key]
            making.set()
        return value

    def holds(self, objects: tuple[Any, ...], options: Hashable) -> bool:
        with self._lock:
            self._purge()
            return (tuple(id(o) for o in objects), options) in self._items

    def __len__(self) -> int:
        with self._lock:
            self._purge()
            return len(self._items)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self.hits = self.misses = 0


MEMO = IdentityMemo()


def _plain(value: Any) -> Hashable:
    """Options as a hashable value: lists and sets of ids become tuples."""
    if isinstance(value, (list, tuple)):
        return tuple(_plain(v) for v in value)
    if isinstance(value, (set, frozenset)):
        return tuple(sorted(value))
    if isinstance(value, dict):
        return tuple(sorted((k, _plain(v)) for k, v in value.items()))
    return value


def _render_key(render: Callable[..., Any], args: tuple, options: dict[str, Any]) -> Hashable:
    # the look the picture is drawn under (focus, small multiple, presenter) is part of what it is:
    # without it the focus layout got the side-by-side picture back, labels and all
    return (getattr(render, "__module__", ""), getattr(render, "__qualname__", repr(render)),
            _plain(args), _plain(options), looks.current())


def drawn(render: Callable[..., T], subject: Any, *args: Any, **options: Any) -> T:
    """`render(subject, *args, **options)` (a trace or a memory's picture), made once per
    (subject, render, arguments)."""
    return MEMO.get((subject,), _render_key(render, args, options), lambda: render(subject, *args, **options))


def in_background(work: Callable[[], Any]) -> threading.Thread:
    """Run `work` (pure: it fills this cache, no Streamlit call) in a daemon thread under the
    caller's look, so the keys it makes match the caller's next draw. A failure there is left for
    the page's own draw to meet and show."""
    context = contextvars.copy_context()

    def run() -> None:
        try:
            context.run(work)
        except Exception:  # noqa: BLE001 - the page makes the value again and shows its error
            log.debug("a prefetch failed", exc_info=True)

    worker = threading.Thread(target=run, name="memrag-prefetch", daemon=True)
    worker.start()
    return worker


def made(name: str, objects: tuple[Any, ...], options: Any, make: Callable[[], T]) -> T:
    """`make()` once per (`name`, the objects' identity, options): tables built from traces."""
    return MEMO.get(objects, (name, _plain(options)), make)
