"""Extended headers count against the limits before their data is read: a long-name header
that declares 200 MiB is refused from its 512 bytes, with the memory of the install
bounded (tarfile would read the whole of it into memory), and a header that declares a
negative size is refused."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from raw_core.errors import PackageUnsafe
from raw_core.packages import PackageStore, install_package
from raw_core.packages.archive import MAX_HEADER_BYTES

_CHUNK = 16 * 1024 * 1024


def _long_name_bomb(target: Path, size: int) -> None:
    """A .tar.gz whose first header is a GNU long name declaring ``size`` bytes, written
    quickly: one compressed block of name bytes repeated as gzip members (a reader inflates
    them as one stream), so building it compresses 16 MiB, not ``size`` bytes."""
    header = tarfile.TarInfo("././@LongLink")
    header.type = tarfile.GNUTYPE_LONGNAME
    header.size = size
    block = gzip.compress(b"n" * _CHUNK, compresslevel=9)
    with target.open("wb") as out:
        out.write(gzip.compress(header.tobuf(format=tarfile.USTAR_FORMAT)))
        for _ in range(size // _CHUNK):
            out.write(block)
        member = tarfile.TarInfo("raw-package.json")
        out.write(gzip.compress(member.tobuf(format=tarfile.USTAR_FORMAT) + b"\0" * 1024))


# The peak resident memory of the install's own process: VmHWM, the high-water mark of
# its resident set. getrusage's ru_maxrss would not do: Linux carries the parent's peak
# over into a child across fork and exec, and the test runner's is already large.
_MEASURE = """
import json, sys
from pathlib import Path
from raw_core.errors import RawError
from raw_core.packages import PackageStore, install_package

source, data, config = sys.argv[1:]
try:
    install_package(source, config_file=Path(config), store=PackageStore(Path(data)))
    outcome = {"code": None}
except RawError as exc:
    outcome = {"code": exc.code, "message": exc.message}
status = Path("/proc/self/status").read_text()
peak = next(line for line in status.splitlines() if line.startswith("VmHWM:"))
outcome["max_rss_kib"] = int(peak.split()[1])
print(json.dumps(outcome))
"""


def test_a_long_name_header_of_200_mib_is_refused_in_bounded_memory(
    tmp_path: Path, store: PackageStore, config_file: Path
) -> None:
    target = tmp_path / "long-name.tar.gz"
    _long_name_bomb(target, 200 * 1024 * 1024)
    assert target.stat().st_size < 1024 * 1024
    result = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(target), str(store.data_dir), str(config_file)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    outcome = json.loads(result.stdout)
    assert outcome["code"] == "package_unsafe"
    assert f"more than {MAX_HEADER_BYTES} bytes of extended headers" in outcome["message"]
    assert outcome["max_rss_kib"] < 128 * 1024, outcome  # tarfile alone would hold 200 MiB
    assert not store.data_dir.exists()


def test_a_header_that_declares_a_negative_size_is_refused(
    tmp_path: Path, store: PackageStore, config_file: Path
) -> None:
    header = bytearray(tarfile.TarInfo("raw-package.json").tobuf(format=tarfile.USTAR_FORMAT))
    header[124:136] = b"\xff" * 12  # base-256: -1
    header[148:156] = b" " * 8
    header[148:156] = b"%06o\0 " % sum(header)
    target = tmp_path / "negative.tar.gz"
    target.write_bytes(gzip.compress(bytes(header) + b"{}" + b"\0" * 1534))
    with pytest.raises(PackageUnsafe, match="negative size"):
        install_package(target, config_file=config_file, store=store)
    assert not store.data_dir.exists()
