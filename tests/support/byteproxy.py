"""A TCP proxy in front of the Ray dashboard that counts the bytes each request gets back, and can cut
every open connection (what a dashboard restart does to its clients)."""

from __future__ import annotations

import socket
import threading
from collections import Counter
from contextlib import contextmanager
from typing import Iterator


class ByteProxy:
    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.received = Counter()  # request line's path (query dropped) -> bytes sent back to the client
        self.lock = threading.Lock()
        self.open: set[socket.socket] = set()
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def total(self) -> int:
        with self.lock:
            return sum(self.received.values())

    def cut(self) -> int:
        """Closes every open connection; returns how many there were."""
        with self.lock:
            doomed, self.open = self.open, set()
        for sock in doomed:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()
        return len(doomed)

    def close(self) -> None:
        self.listener.close()
        self.cut()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        try:
            upstream = socket.create_connection(("127.0.0.1", self.upstream_port), timeout=30)
        except OSError:
            client.close()
            return
        upstream.settimeout(None)
        with self.lock:
            self.open |= {client, upstream}
        path = [""]
        threading.Thread(target=self._pipe, args=(client, upstream, path, False), daemon=True).start()
        self._pipe(upstream, client, path, True)
        with self.lock:
            self.open -= {client, upstream}
        client.close()
        upstream.close()

    def _pipe(self, source: socket.socket, sink: socket.socket, path: list[str], counted: bool) -> None:
        try:
            while chunk := source.recv(1 << 16):
                if not counted and not path[0]:
                    path[0] = chunk.split(b" ", 2)[1].split(b"?")[0].decode(errors="replace")
                sink.sendall(chunk)
                if counted:
                    with self.lock:
                        self.received[path[0]] += len(chunk)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


@contextmanager
def byte_proxy(dashboard_url: str) -> Iterator[ByteProxy]:
    proxy = ByteProxy(int(dashboard_url.rsplit(":", 1)[1]))
    try:
        yield proxy
    finally:
        proxy.close()
