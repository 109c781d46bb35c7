"""What the dynamic loader will ask of an ELF file, read from the file itself.

The needed libraries (DT_NEEDED), the run paths (DT_RUNPATH, DT_RPATH), the soname, the
symbol versions needed from each library (.gnu.version_r) and those the file defines
(.gnu.version_d). 64-bit little-endian ELF only: the bundle is for x86_64.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

ELF_MAGIC = b"\x7fELF"
ELFCLASS64 = 2
ELFDATA2LSB = 1
SHT_DYNAMIC = 6
SHT_GNU_VERDEF = 0x6FFFFFFD
SHT_GNU_VERNEED = 0x6FFFFFFE
DT_NULL, DT_NEEDED, DT_SONAME, DT_RPATH, DT_RUNPATH = 0, 1, 14, 15, 29
# Bounds for hostile or broken files: no library we ship comes near them.
MAX_FILE_SIZE = 512 * 1024 * 1024
MAX_ENTRIES = 100_000


class ElfError(Exception):
    pass


@dataclass
class DynamicInfo:
    needed: list[str] = field(default_factory=list)
    soname: str | None = None
    runpath: str | None = None
    rpath: str | None = None
    # library file name -> version names needed from it (e.g. libc.so.6 -> {"GLIBC_2.34"})
    version_needs: dict[str, set[str]] = field(default_factory=dict)
    version_defs: set[str] = field(default_factory=set)


def is_elf(path: Path) -> bool:
    if not path.is_file() or path.is_symlink():
        return False
    with path.open("rb") as file:
        return file.read(4) == ELF_MAGIC


class _Reader:
    def __init__(self, data: bytes, path: Path):
        self.data = data
        self.path = path

    def unpack(self, fmt: str, offset: int) -> tuple:
        size = struct.calcsize(fmt)
        if offset < 0 or offset + size > len(self.data):
            raise ElfError(f"{self.path}: truncated ELF structure at offset {offset}")
        return struct.unpack_from(fmt, self.data, offset)

    def string(self, table: tuple[int, int], index: int) -> str:
        start, size = table
        if index >= size:
            raise ElfError(f"{self.path}: string index {index} outside its table")
        end = self.data.find(b"\0", start + index, start + size)
        if end < 0:
            raise ElfError(f"{self.path}: unterminated string")
        return self.data[start + index : end].decode("utf-8", "replace")


def read_dynamic(path: Path) -> DynamicInfo:
    if path.stat().st_size > MAX_FILE_SIZE:
        raise ElfError(f"{path}: larger than {MAX_FILE_SIZE} bytes")
    reader = _Reader(path.read_bytes(), path)
    ident = reader.data[:16]
    if ident[:4] != ELF_MAGIC or ident[4] != ELFCLASS64 or ident[5] != ELFDATA2LSB:
        raise ElfError(f"{path}: not a 64-bit little-endian ELF file")
    shoff, = reader.unpack("<Q", 0x28)
    shentsize, shnum = reader.unpack("<HH", 0x3A)
    if shnum > MAX_ENTRIES or shentsize < 64:
        raise ElfError(f"{path}: implausible section header table")
    # (type, offset, size, link, info) of every section
    sections = []
    for index in range(shnum):
        _, sh_type, _, _, offset, size, link, info, _, _ = reader.unpack("<IIQQQQIIQQ", shoff + index * shentsize)
        sections.append((sh_type, offset, size, link, info))

    def strtab(link: int) -> tuple[int, int]:
        if link >= len(sections):
            raise ElfError(f"{path}: section link {link} out of range")
        return sections[link][1], sections[link][2]

    info = DynamicInfo()
    for sh_type, offset, size, link, count in sections:
        if sh_type == SHT_DYNAMIC:
            table = strtab(link)
            for entry in range(min(size // 16, MAX_ENTRIES)):
                tag, value = reader.unpack("<qQ", offset + entry * 16)
                if tag == DT_NULL:
                    break
                if tag == DT_NEEDED:
                    info.needed.append(reader.string(table, value))
                elif tag == DT_SONAME:
                    info.soname = reader.string(table, value)
                elif tag == DT_RUNPATH:
                    info.runpath = reader.string(table, value)
                elif tag == DT_RPATH:
                    info.rpath = reader.string(table, value)
        elif sh_type == SHT_GNU_VERNEED:
            table = strtab(link)
            need = offset
            for _ in range(min(count, MAX_ENTRIES)):
                _, aux_count, file_name, aux, next_need = reader.unpack("<HHIII", need)
                versions = info.version_needs.setdefault(reader.string(table, file_name), set())
                entry = need + aux
                for _ in range(min(aux_count, MAX_ENTRIES)):
                    _, _, _, name, next_aux = reader.unpack("<IHHII", entry)
                    versions.add(reader.string(table, name))
                    entry += next_aux
                if next_need == 0:
                    break
                need += next_need
        elif sh_type == SHT_GNU_VERDEF:
            table = strtab(link)
            definition = offset
            for _ in range(min(count, MAX_ENTRIES)):
                _, _, _, aux_count, _, aux, next_def = reader.unpack("<HHHHIII", definition)
                if aux_count:
                    name, = reader.unpack("<I", definition + aux)
                    info.version_defs.add(reader.string(table, name))
                if next_def == 0:
                    break
                definition += next_def
    return info
