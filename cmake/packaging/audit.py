#!/usr/bin/env python3
"""Audits a release bundle: every ELF file in it must run on a host that gives glibc 2.34.

usage: audit.py BUNDLE_DIR

Reads every ELF file in BUNDLE_DIR (found by its magic number, whatever its name) and fails
when one
  - needs a symbol version from glibc above GLIBC_2.34, or one that is not a plain GLIBC_x.y
    (GLIBC_PRIVATE, GLIBC_ABI_DT_RELR);
  - needs a library that is neither part of glibc, nor libgcc_s (the one host library besides
    glibc, see cmake/Portable.cmake; its versions capped at GCC_7.0.0), nor in the bundle where
    the file's run path finds it;
  - needs a symbol version from a bundled library that the library does not define;
  - has a run path that is absolute or leaves the bundle.
Prints one line per ELF file; exits 1 with the reasons when any check fails.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from elf import ElfError, is_elf, read_dynamic  # noqa: E402

GLIBC_CAP = (2, 34)
# The libraries glibc itself provides on x86_64: the host's, never bundled.
GLIBC_LIBRARIES = frozenset({
    "libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0", "librt.so.1", "libresolv.so.2",
    "libutil.so.1", "libanl.so.1", "ld-linux-x86-64.so.2",
})
# Host libraries beyond glibc, with the highest symbol version allowed: GCC_7.0.0 is in every
# libgcc_s from GCC 7 on (Amazon Linux 2023 has GCC 11, Ubuntu 22.04 GCC 12).
HOST_LIBRARIES = {"libgcc_s.so.1": ("GCC", (7, 0, 0))}

VERSION_NAME = re.compile(r"^(?P<prefix>[A-Z]+)_(?P<number>[0-9]+(?:\.[0-9]+)+)$")


def host_libraries() -> frozenset[str]:
    return GLIBC_LIBRARIES | frozenset(HOST_LIBRARIES)


def version_problem(library: str, version: str) -> str | None:
    """Why VERSION, needed from the host library LIBRARY, may be missing on the target hosts."""
    if library in GLIBC_LIBRARIES:
        prefix, cap = "GLIBC", GLIBC_CAP
    else:
        prefix, cap = HOST_LIBRARIES[library]
    match = VERSION_NAME.match(version)
    if not match or match["prefix"] != prefix:
        return f"needs {version} from {library}, which is not a {prefix}_x.y version"
    number = tuple(int(part) for part in match["number"].split("."))
    if number > cap:
        return f"needs {version} from {library}, above {prefix}_{'.'.join(map(str, cap))}"
    return None


def run_path_dirs(bundle: Path, elf_file: Path, run_path: str) -> tuple[list[Path], list[str]]:
    """The directories a run path names, and the problems with it."""
    dirs, problems = [], []
    for entry in run_path.split(":"):
        if not entry.startswith("$ORIGIN"):
            problems.append(f"run path entry '{entry}' is not relative to $ORIGIN")
            continue
        directory = Path(entry.replace("$ORIGIN", str(elf_file.parent), 1)).resolve()
        if directory != bundle and bundle not in directory.parents:
            problems.append(f"run path entry '{entry}' leaves the bundle")
            continue
        dirs.append(directory)
    return dirs, problems


def audit_file(bundle: Path, elf_file: Path) -> tuple[list[str], str]:
    """(problems, summary) for one ELF file of the bundle."""
    info = read_dynamic(elf_file)
    problems = []
    dirs = []
    for run_path in filter(None, (info.runpath, info.rpath)):
        found, wrong = run_path_dirs(bundle, elf_file, run_path)
        dirs += found
        problems += wrong
    highest_glibc = (0,)
    for library in info.needed:
        versions = info.version_needs.get(library, set())
        if library in host_libraries():
            for version in sorted(versions):
                problem = version_problem(library, version)
                if problem:
                    problems.append(problem)
                elif library in GLIBC_LIBRARIES:
                    highest_glibc = max(highest_glibc, tuple(int(p) for p in version.split("_")[1].split(".")))
            continue
        candidates = [d / library for d in dirs if (d / library).is_file()]
        if not candidates:
            problems.append(f"needs {library}, which is neither part of glibc nor in the bundle on its run path")
            continue
        defined = read_dynamic(candidates[0]).version_defs
        for version in sorted(versions - defined):
            problems.append(f"needs {version} from {library}, which the bundled copy does not define")
    bundled = [lib for lib in info.needed if lib not in host_libraries()]
    summary = (f"GLIBC_{'.'.join(map(str, highest_glibc))} at most; "
               f"{len(bundled)} bundled {'library' if len(bundled) == 1 else 'libraries'} needed")
    return problems, summary


def audit(bundle: Path) -> list[str]:
    """Every problem found in the bundle, printing one line per ELF file."""
    bundle = bundle.resolve()
    problems = []
    elf_files = sorted(p for p in bundle.rglob("*") if is_elf(p))
    if not elf_files:
        return [f"{bundle}: no ELF file found"]
    for elf_file in elf_files:
        name = elf_file.relative_to(bundle)
        try:
            found, summary = audit_file(bundle, elf_file)
        except ElfError as error:
            found, summary = [str(error)], "unreadable"
        print(f"{'FAIL' if found else 'ok  '} {name}: {summary}")
        problems += [f"{name}: {problem}" for problem in found]
    return problems


def main() -> int:
    if len(sys.argv) != 2 or not Path(sys.argv[1]).is_dir():
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    problems = audit(Path(sys.argv[1]))
    for problem in problems:
        print(f"audit: {problem}", file=sys.stderr)
    if problems:
        print(f"audit: {len(problems)} problem(s): the bundle would not run on every glibc "
              f"{'.'.join(map(str, GLIBC_CAP))} host", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
