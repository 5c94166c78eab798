"""Follow a Ray job's log through the dashboard's tail websocket, printing each byte once.

Ray 2.49's Jobs API has no offset: GET /api/jobs/<id>/logs returns the whole log (what the submitter
fetched on every poll before, so its cost grew with the run), and /api/jobs/<id>/logs/tail is a
websocket that sends the log from its first line, then every new line as it is written, and closes
once the job ended and the log's last line was sent. So the log is fetched once, not once per poll.
A broken connection (dashboard restart) reconnects: the tail starts again from the first line and
the bytes already printed are skipped, so the output has no duplicates and no gaps.

Standard library only: a minimal RFC 6455 client (the server's frames are never masked; ours are).
"""

from __future__ import annotations

import base64
import os
import socket
import ssl
import struct
import time
import urllib.parse
from typing import BinaryIO

OP_CONTINUATION, OP_TEXT, OP_BINARY, OP_CLOSE, OP_PING, OP_PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA


def ray_auth_headers() -> dict[str, str]:
    """The header of Ray's token authentication (Ray 2.52 and later), with the token the chart hands the pod as
    RAY_AUTH_TOKEN (global.rayAuth.tokenSecret); none without one. X-Ray-Authorization, Ray's own header, leaves
    Authorization to a proxy in front of the dashboard (an Ingress with basic auth)."""
    token = os.environ.get("RAY_AUTH_TOKEN", "").strip()
    return {"X-Ray-Authorization": f"Bearer {token}"} if token else {}


class TailGone(Exception):
    """The dashboard answered the tail's handshake with 404: it does not know the job."""


class Connection:
    """One websocket connection to a tail URL: frames in, pongs and the close out."""

    def __init__(self, url: str, timeout: float) -> None:
        parts = urllib.parse.urlsplit(url)
        secure = parts.scheme == "https"
        port = parts.port or (443 if secure else 80)
        sock = socket.create_connection((parts.hostname, port), timeout=timeout)
        if secure:
            sock = ssl.create_default_context().wrap_socket(sock, server_hostname=parts.hostname)
        self.sock = sock
        self.buffer = bytearray()
        key = base64.b64encode(os.urandom(16)).decode()
        sock.sendall((f"GET {parts.path} HTTP/1.1\r\nHost: {parts.netloc}\r\nUpgrade: websocket\r\n"
                      f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                      # The dashboard refuses requests without one (its browser check reads it).
                      "User-Agent: verl-ppo-submitter\r\n"
                      + "".join(f"{name}: {value}\r\n" for name, value in ray_auth_headers().items())
                      + "\r\n").encode())
        head = self._until(b"\r\n\r\n").decode("latin-1")
        status = head.split(" ", 2)[1] if " " in head else ""
        if status == "404":
            raise TailGone(head.split("\r\n", 1)[0])
        if status != "101":
            raise OSError(f"log tail handshake answered {head.splitlines()[0] if head else 'nothing'}")

    def _fill(self) -> None:
        chunk = self.sock.recv(1 << 16)
        if not chunk:
            raise ConnectionError("log tail connection closed")
        self.buffer += chunk

    def _until(self, mark: bytes) -> bytes:
        while (end := self.buffer.find(mark)) < 0:
            self._fill()
        head = bytes(self.buffer[:end])
        del self.buffer[:end + len(mark)]
        return head

    def _parsed(self) -> tuple[int, bytes] | None:
        """The buffer's first frame, taken off it; None while it is incomplete (nothing is taken)."""
        buffer = self.buffer
        if len(buffer) < 2:
            return None
        size, start = buffer[1] & 0x7F, 2
        if size == 126:
            size, start = (struct.unpack_from("!H", buffer, 2)[0], 4) if len(buffer) >= 4 else (None, 0)
        elif size == 127:
            size, start = (struct.unpack_from("!Q", buffer, 2)[0], 10) if len(buffer) >= 10 else (None, 0)
        masked = buffer[1] & 0x80
        if size is None or len(buffer) < start + (4 if masked else 0) + size:
            return None
        mask = bytes(buffer[start:start + 4]) if masked else b""
        start += len(mask)
        payload = bytes(buffer[start:start + size])
        opcode = buffer[0] & 0x0F
        del buffer[:start + size]
        if mask:
            payload = bytes(byte ^ mask[index % 4] for index, byte in enumerate(payload))
        return opcode, payload

    def frame(self) -> tuple[int, bytes]:
        """(opcode, payload) of the next frame; socket.timeout when none came in time (a partial frame stays)."""
        while (parsed := self._parsed()) is None:
            self._fill()
        return parsed

    def send(self, opcode: int, payload: bytes = b"") -> None:
        mask = os.urandom(4)
        masked = bytes(byte ^ mask[index % 4] for index, byte in enumerate(payload))
        self.sock.sendall(bytes([0x80 | opcode, 0x80 | len(payload)]) + mask + masked)

    def settimeout(self, seconds: float) -> None:
        self.sock.settimeout(seconds)

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


class LogTail:
    """The log of one Ray job, printed to `out` as it grows; `printed` bytes so far, over every connection."""

    def __init__(self, dashboard_url: str, submission_id: str, out: BinaryIO, timeout: float = 30.0) -> None:
        self.submission_id = submission_id
        self.url = f"{dashboard_url}/api/jobs/{urllib.parse.quote(submission_id)}/logs/tail"
        self.out = out
        self.timeout = timeout
        self.printed = 0
        self.complete = False  # the server closed the tail: the job ended and all of its log was sent
        self.connection: Connection | None = None
        self.received = 0  # bytes of log this connection sent (it starts from the log's first byte)

    def pump(self, seconds: float) -> None:
        """Prints what arrives for up to `seconds`. A lost connection is dropped and reopened on the next call;
        TailGone when the dashboard does not know the job."""
        deadline = time.monotonic() + seconds
        try:
            while not self.complete and (left := deadline - time.monotonic()) > 0:
                if self.connection is None:
                    self.connection, self.received = Connection(self.url, self.timeout), 0
                self.connection.settimeout(max(left, 0.01))
                self._handle(*self.connection.frame())
        except socket.timeout:
            pass
        except (OSError, ValueError):
            self.drop()
            time.sleep(max(deadline - time.monotonic(), 0))  # try again on the next call, not at once
        finally:
            self.out.flush()

    def _handle(self, opcode: int, payload: bytes) -> None:
        if opcode in (OP_TEXT, OP_BINARY, OP_CONTINUATION):
            self._print(payload)
        elif opcode == OP_PING:
            self.connection.send(OP_PONG, payload[:125])
        elif opcode == OP_CLOSE:
            self.drop()
            self.complete = True

    def _print(self, payload: bytes) -> None:
        start = self.received
        self.received += len(payload)
        if self.received > self.printed:  # skip what an earlier connection already printed
            self.out.write(payload[max(self.printed - start, 0):])
            self.printed = self.received

    def drop(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None

    def reopen(self) -> None:
        """The tail closed while the job was still running (the dashboard lost its agent): follow it anew."""
        self.drop()
        self.complete = False
