#!/usr/bin/env python3
"""Makes the self-contained release bundle (`make dist`).

usage: bundle.py BUILD_DIR DIST_DIR

DIST_DIR/neuron-cache-<version>-linux-x86_64.tar.gz holds one directory of that name:
  bin/neuron-cache                   stripped; run path $ORIGIN/../lib/neuron-cache
  lib/neuron-cache/lib*.so.*         every library it needs beyond glibc and libgcc_s (the
                                     host's, see cmake/Portable.cmake), named by soname, each
                                     with run path $ORIGIN so they find one another
  share/bash-completion, zsh, fish   the completions, as `make install` lays them out
  share/man/man1/neuron-cache.1
  share/doc/neuron-cache/            bundled-libraries.txt (soname, Debian package, version)
                                     and each bundled package's copyright file
  SHA256SUMS                         every other file, `sha256sum -c` format
The same relative layout is what the wheel installs into a virtual environment. The bundle is
audited (audit.py) before the tarball is written; a failing audit writes nothing.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from audit import audit, host_libraries  # noqa: E402

LIB_DIR = "lib/neuron-cache"
LDD_LINE = re.compile(r"^\s*(?P<name>\S+) => (?P<path>/\S+) \(0x[0-9a-f]+\)$")


def project_version(build_dir: Path) -> str:
    cache = (build_dir / "CMakeCache.txt").read_text()
    match = re.search(r"^CMAKE_PROJECT_VERSION:STATIC=(.+)$", cache, re.M)
    if not match:
        sys.exit(f"bundle: no CMAKE_PROJECT_VERSION in {build_dir}/CMakeCache.txt (configure first)")
    return match[1]


def run(*command: str, **kwargs) -> str:
    return subprocess.run(command, check=True, text=True, stdout=subprocess.PIPE, **kwargs).stdout


def needed_libraries(binary: Path) -> dict[str, Path]:
    """soname -> file of every library the binary loads, glibc's and libgcc_s excepted."""
    libraries = {}
    for line in run("ldd", str(binary)).splitlines():
        if "not found" in line:
            sys.exit(f"bundle: {binary} needs a library this machine lacks: {line.strip()}")
        match = LDD_LINE.match(line)
        if match and match["name"] not in host_libraries():
            libraries[match["name"]] = Path(match["path"])
    return libraries


def owning_package(library: Path) -> tuple[str, str] | None:
    """(Debian package, version) that installed LIBRARY, through dpkg, or None."""
    real = library.resolve()
    for candidate in dict.fromkeys([library, real, Path("/usr") / real.relative_to("/"),
                                    Path("/") / real.relative_to("/usr") if real.is_relative_to("/usr") else real]):
        result = subprocess.run(["dpkg-query", "-S", str(candidate)], text=True, capture_output=True)
        if result.returncode == 0:
            package = result.stdout.split(":", 1)[0].strip()
            version = run("dpkg-query", "-W", "-f=${Version}", package)
            return package, version
    return None


def copy_libraries(libraries: dict[str, Path], stage: Path) -> None:
    lib_dir = stage / LIB_DIR
    doc_dir = stage / "share/doc/neuron-cache"
    lib_dir.mkdir(parents=True)
    doc_dir.mkdir(parents=True, exist_ok=True)
    listing = ["# Libraries in lib/neuron-cache: soname, the Debian package it was taken from, its version.",
               "# Their licences: the *.copyright files beside this one."]
    for soname, path in sorted(libraries.items()):
        target = lib_dir / soname
        shutil.copyfile(path.resolve(), target)
        target.chmod(0o644)
        run("patchelf", "--set-rpath", "$ORIGIN", str(target))
        package = owning_package(path)
        if package:
            listing.append(f"{soname}\t{package[0]}\t{package[1]}")
            copyright_file = Path("/usr/share/doc") / package[0] / "copyright"
            if copyright_file.is_file():
                shutil.copyfile(copyright_file, doc_dir / f"{package[0]}.copyright")
        else:
            listing.append(f"{soname}\t(not from a Debian package)\t-")
    (doc_dir / "bundled-libraries.txt").write_text("\n".join(listing) + "\n")


def write_checksums(stage: Path) -> None:
    lines = []
    for path in sorted(p for p in stage.rglob("*") if p.is_file()):
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        lines.append(f"{digest}  {path.relative_to(stage).as_posix()}")
    (stage / "SHA256SUMS").write_text("\n".join(lines) + "\n")


def write_tarball(stage: Path, tarball: Path) -> None:
    epoch = os.environ.get("SOURCE_DATE_EPOCH")

    def normalize(member: tarfile.TarInfo) -> tarfile.TarInfo:
        member.uid = member.gid = 0
        member.uname = member.gname = "root"
        if epoch:
            member.mtime = int(epoch)
        return member

    partial = tarball.with_name(tarball.name + ".partial")
    with tarfile.open(partial, "w:gz") as archive:
        archive.add(stage, arcname=stage.name, filter=normalize, recursive=False)
        for path in sorted(stage.rglob("*")):
            archive.add(path, arcname=f"{stage.name}/{path.relative_to(stage).as_posix()}",
                        filter=normalize, recursive=False)
    partial.replace(tarball)
    digest = hashlib.sha256(tarball.read_bytes()).hexdigest()
    tarball.with_name(tarball.name + ".sha256").write_text(f"{digest}  {tarball.name}\n")


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    build_dir, dist_dir = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
    name = f"neuron-cache-{project_version(build_dir)}-linux-x86_64"
    stage = dist_dir / name
    shutil.rmtree(stage, ignore_errors=True)
    dist_dir.mkdir(parents=True, exist_ok=True)
    run("cmake", "--install", str(build_dir), "--prefix", str(stage), stderr=subprocess.STDOUT)
    binary = stage / "bin/neuron-cache"
    libraries = needed_libraries(binary)
    copy_libraries(libraries, stage)
    run("patchelf", "--set-rpath", f"$ORIGIN/../{LIB_DIR}", str(binary))
    print(f"bundle: {len(libraries)} libraries in {LIB_DIR}; auditing {stage}")
    problems = audit(stage)
    if problems:
        for problem in problems:
            print(f"audit: {problem}", file=sys.stderr)
        print("bundle: the audit failed; no tarball written", file=sys.stderr)
        return 1
    write_checksums(stage)
    tarball = dist_dir / f"{name}.tar.gz"
    write_tarball(stage, tarball)
    print(f"bundle: {tarball} ({tarball.stat().st_size // 1024} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
