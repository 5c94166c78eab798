"""A TCP relay to a real server that opens its port only after a delay: until then connections to it
are refused, as a NetworkPolicy enforcer refuses a new pod's first connections until it admits the pod."""

from __future__ import annotations

import socket
import threading
from contextlib import contextmanager
from typing import Iterator


def _pipe(source: socket.socket, target: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            target.sendall(data)
    except OSError:
        pass
    finally:
        target.close()


def _serve(listener: socket.socket, target: tuple[str, int]) -> None:
    while True:
        try:
            incoming, _ = listener.accept()
        except OSError:  # closed: the relay is done
            return
        outgoing = socket.create_connection(target, timeout=10)
        for source, sink in ((incoming, outgoing), (outgoing, incoming)):
            threading.Thread(target=_pipe, args=(source, sink), daemon=True).start()


@contextmanager
def late_relay(port: int, target: tuple[str, int], delay: float) -> Iterator[None]:
    """Relays 127.0.0.1:port to target from `delay` seconds on, until the block ends."""
    listener = socket.socket()

    def open_port() -> None:
        listener.bind(("127.0.0.1", port))
        listener.listen()
        _serve(listener, target)

    opener = threading.Timer(delay, open_port)
    opener.daemon = True
    opener.start()
    try:
        yield
    finally:
        opener.cancel()
        listener.close()
