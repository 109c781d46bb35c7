#!/usr/bin/env python3
"""Makes the Python wheel from the release bundle (`make wheel`), with nothing but the stdlib.

usage: wheel.py DIST_DIR

Reads DIST_DIR/neuron-cache-<version>-linux-x86_64.tar.gz (bundle.py) and writes
DIST_DIR/neuron_cache-<version>-py3-none-manylinux_2_34_x86_64.whl. As in the cmake and ruff
wheels, the program is a script of the wheel (<name>.data/scripts/), which pip puts in the
environment's bin/ (on its PATH once activated); the rest goes to <name>.data/data/, which pip
installs under the environment's root. So a virtual environment (or ~/.local, or /usr/local)
ends up with the bundle's own layout: bin/neuron-cache finds lib/neuron-cache/ through its
run path, and the man page and completions land in share/. Nothing is compiled at install time.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import sys
import tarfile
import time
import zipfile
from pathlib import Path

TAG = "py3-none-manylinux_2_34_x86_64"
BUNDLE = re.compile(r"^neuron-cache-(?P<version>[0-9][0-9A-Za-z.+-]*)-linux-x86_64\.tar\.gz$")
SUMMARY = "Share the AWS Neuron compile cache through a Hugging Face Hub, directory or S3 repo"


def metadata(version: str) -> str:
    return "\n".join([
        "Metadata-Version: 2.1",
        "Name: neuron-cache",
        f"Version: {version}",
        f"Summary: {SUMMARY}",
        "Requires-Python: >=3.7",
        "Classifier: Environment :: Console",
        "Classifier: Operating System :: POSIX :: Linux",
        "Classifier: Programming Language :: C++",
        "",
        "neuron-cache shares the Neuron compiler's cache (neuronx-cc) between hosts through a cache repo:",
        "a Hugging Face Hub model repo compatible with optimum-neuron's Neuron model cache, a directory",
        "(local disk, NFS, FSx for Lustre) or an S3 prefix. This wheel carries the self-contained",
        "x86_64 Linux program (glibc 2.34 or newer); `pip install` puts `neuron-cache` on the",
        "environment's PATH.",
        "",
    ])


def wheel_file() -> str:
    return "\n".join([
        "Wheel-Version: 1.0",
        "Generator: neuron-cache cmake/packaging/wheel.py",
        "Root-Is-Purelib: false",
        f"Tag: {TAG}",
        "",
    ])


def record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def find_bundle(dist_dir: Path) -> tuple[Path, str]:
    bundles = sorted(p for p in dist_dir.iterdir() if BUNDLE.match(p.name))
    if len(bundles) != 1:
        sys.exit(f"wheel: expected one neuron-cache-<version>-linux-x86_64.tar.gz in {dist_dir}, "
                 f"found {len(bundles)} (run make dist)")
    return bundles[0], BUNDLE.match(bundles[0].name)["version"]


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    dist_dir = Path(sys.argv[1]).resolve()
    tarball, version = find_bundle(dist_dir)
    name = f"neuron_cache-{version}"
    data_dir, info_dir = f"{name}.data", f"{name}.dist-info"
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))  # 1980-01-01, zip's first day
    date_time = time.gmtime(max(epoch, 315532800))[:6]
    wheel = dist_dir / f"{name}-{TAG}.whl"
    partial = wheel.with_name(wheel.name + ".partial")
    records = []

    with tarfile.open(tarball) as bundle, zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:

        def add(arcname: str, data: bytes, mode: int) -> None:
            entry = zipfile.ZipInfo(arcname, date_time)
            entry.external_attr = (0o100000 | mode) << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(entry, data)
            records.append(f"{arcname},{record_hash(data)},{len(data)}")

        for member in sorted(bundle.getmembers(), key=lambda m: m.name):
            if not member.isfile():
                if not member.isdir():
                    sys.exit(f"wheel: {member.name} in {tarball.name} is neither a file nor a directory")
                continue
            _, _, relative = member.name.partition("/")
            if relative == "SHA256SUMS":
                continue  # the wheel's RECORD carries the hashes
            data = bundle.extractfile(member).read()
            mode = 0o755 if member.mode & 0o111 else 0o644
            if relative == "bin/neuron-cache":
                add(f"{data_dir}/scripts/neuron-cache", data, 0o755)
            elif relative.startswith(("lib/", "share/")):
                add(f"{data_dir}/data/{relative}", data, mode)
            else:
                sys.exit(f"wheel: unexpected file {member.name} in {tarball.name}")
        if not any(r.startswith(f"{data_dir}/scripts/neuron-cache,") for r in records):
            sys.exit(f"wheel: {tarball.name} has no bin/neuron-cache")
        add(f"{info_dir}/METADATA", metadata(version).encode(), 0o644)
        add(f"{info_dir}/WHEEL", wheel_file().encode(), 0o644)
        record = "\n".join(records + [f"{info_dir}/RECORD,,", ""])
        entry = zipfile.ZipInfo(f"{info_dir}/RECORD", date_time)
        entry.external_attr = (0o100644) << 16
        archive.writestr(entry, record, zipfile.ZIP_DEFLATED)
    partial.replace(wheel)
    print(f"wheel: {wheel} ({wheel.stat().st_size // 1024} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
