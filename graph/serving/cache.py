"""The answer cache: the served store never changes, so a reply can be reused until it is dropped."""

import threading
from collections import OrderedDict
from typing import Any


class AnswerCache:
    """Pickled replies by call, least recently used dropped first, bounded in bytes."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._entries: OrderedDict[Any, bytes] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()
        self.hits = self.misses = 0  # for /metrics

    def get(self, key: Any) -> bytes | None:
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
                self.hits += 1
            else:
                self.misses += 1
            return value

    def put(self, key: Any, value: bytes) -> None:
        """Keep ``value`` unless it would take over an eighth of the cache (one big answer must not flush it)."""
        if len(value) > self.capacity // 8:
            return
        with self._lock:
            previous = self._entries.pop(key, None)
            self._size += len(value) - (len(previous) if previous is not None else 0)
            self._entries[key] = value
            while self._size > self.capacity:
                _, dropped = self._entries.popitem(last=False)
                self._size -= len(dropped)
