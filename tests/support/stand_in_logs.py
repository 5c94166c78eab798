"""Stands in for a verbose run: writes BYTES of log to stdout in CHUNKS chunks over SECONDS, then exits 0.

`stand_in_logs.py BYTES CHUNKS SECONDS` (about BYTES: whole lines). Lines carry a counter, non-ASCII text and,
once per chunk, a line longer than the 20,000 characters Ray's log tail sends at most at a time; the log ends without a
newline. Its bytes are the job's log file, which the test compares with what the submitter printed."""

import sys
import time

total, chunks, seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
out = sys.stdout.buffer
written, line_number = 0, 0
for chunk in range(chunks):
    goal = total * (chunk + 1) // chunks
    parts = [b"x" * 25_000 + b"\n"] if chunk % 7 == 3 else []
    # The chunk's size kept as it grows: summing the parts on every line made a 1 GB log take hours.
    size = sum(map(len, parts))
    while written + size < goal:
        line_number += 1
        parts.append(f"{line_number:09d} step {chunk} loss=0.{line_number % 997:03d} r\u00e9compense \u2713\n".encode())
        size += len(parts[-1])
    data = b"".join(parts)  # whole lines: a cut would split a UTF-8 character
    if chunk == chunks - 1:
        data = data.rstrip(b"\n") + b" (no newline at the end)"
    out.write(data)
    out.flush()
    written += len(data)
    time.sleep(seconds / chunks)
