"""Write a slim copy of Ray's wheel as a zip that fits the GPU machine's 64 MiB carry limit.

Ray 2.49's wheel is 70 MB; 31 MB of it are Java jars and 1.7 MB RLlib, which a Python PPO run and the
Jobs API never use. The dashboard's web build stays (2.4 MB): the dashboard, and so the Jobs API,
refuses to start without its folders. Unix modes are kept in the zip entries (gcs_server and raylet
must stay executable); lab/gpu/install.sh restores them.

Usage: python3 lab/gpu/slim_ray.py RAY_WHEEL OUT_ZIP
"""

from __future__ import annotations

import sys
import zipfile

DROPPED_PREFIXES = ("ray/jars/", "ray/rllib/")


def kept(name: str) -> bool:
    return not name.startswith(DROPPED_PREFIXES)


def slim(wheel: str, out: str) -> tuple[int, int]:
    count = dropped = 0
    with zipfile.ZipFile(wheel) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            if not kept(info.filename):
                dropped += 1
                continue
            target.writestr(info, source.read(info), compress_type=zipfile.ZIP_DEFLATED)
            count += 1
    return count, dropped


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    files, dropped = slim(sys.argv[1], sys.argv[2])
    print(f"slim Ray: {files} files kept, {dropped} dropped -> {sys.argv[2]}")
