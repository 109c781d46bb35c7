#!/usr/bin/env python3
"""The floors keep: every file includes only headers of its own floor or of floors below.

Floors, lowest first (ARCHITECTURE.md): util -> http -> hub | aws | xet | layout -> storage ->
compilecache -> registry -> addjobs -> apps. Floors on one level (hub, aws, xet, layout) are
siblings and include none of each other. Reads the sources, runs nothing; exits 1 and
names each file and include that breaks a rule.

    check_floors.py SOURCE_DIR
    check_floors.py --self-test    (the checker catches what it must, on a made-up tree)
"""
import pathlib
import re
import sys
import tempfile

# floor -> level; siblings share a level.
LEVELS = {
    "util": 0,
    "http": 1,
    "hub": 2,
    "aws": 2,
    "xet": 2,
    "layout": 2,
    "storage": 3,
    "compilecache": 4,
    "registry": 5,
    "addjobs": 6,
    "apps": 7,
}
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)


def floor_of_header(header):
    """The floor a project header belongs to, or None for a system or third-party one."""
    parts = header.split("/")
    if parts[0] == "hubcache":
        if len(parts) == 2:  # hubcache/error.hpp: the errors every floor raises
            return "util"
        return parts[1] if parts[1] in LEVELS else None
    if parts[0] in ("registry", "addjobs"):
        return parts[0]
    return None


def floor_of_file(path, root):
    rel = path.relative_to(root).parts
    if rel[0] == "libhubcache":
        # libhubcache/{src,include/hubcache}/<floor>/...
        inner = rel[2:] if rel[1] == "src" else rel[3:]
        if len(inner) >= 2 and inner[0] in LEVELS:
            return inner[0]
        if len(inner) == 1 and rel[1] == "include":
            return "util"  # hubcache/error.hpp
        return None
    if rel[0] in ("registry", "addjobs"):
        return rel[0]
    if rel[0] == "apps":
        return "apps"
    return None


def check(root):
    problems = []
    checked = 0
    for top in ("libhubcache", "registry", "addjobs", "apps"):
        for path in sorted((root / top).rglob("*")):
            if path.suffix not in (".cpp", ".hpp", ".h", ".c") or not path.is_file():
                continue
            own = floor_of_file(path, root)
            if own is None:
                problems.append(f"{path.relative_to(root)}: not in a floor's folder")
                continue
            checked += 1
            for header in INCLUDE.findall(path.read_text(errors="replace")):
                floor = floor_of_header(header)
                if floor is None or floor == own:
                    continue
                if LEVELS[floor] > LEVELS[own]:
                    problems.append(f"{path.relative_to(root)}: {own} includes {header} from {floor}, a higher floor")
                elif LEVELS[floor] == LEVELS[own]:
                    problems.append(f"{path.relative_to(root)}: {own} includes {header} from its sibling {floor}")
    return checked, problems


def self_test():
    """A tree with one file per rule broken, and one that keeps them: each must be told apart."""
    files = {
        "libhubcache/src/util/ok.cpp": '#include "hubcache/util/fs.hpp"\n#include "hubcache/error.hpp"\n#include <vector>\n',
        "libhubcache/src/util/up.cpp": '#include "hubcache/storage/repository.hpp"\n',
        "libhubcache/include/hubcache/hub/api.hpp": '#include <hubcache/aws/config.hpp>\n',
        "libhubcache/src/storage/ok.cpp": '#include "hubcache/hub/api.hpp"\n#include "hubcache/http/client.hpp"\n',
        "libhubcache/src/compilecache/up.cpp": '#include "registry/lookup.hpp"\n',
        "registry/src/ok.cpp": '#include "hubcache/compilecache/sync.hpp"\n',
        "addjobs/src/up.cpp": '  #  include "hubcache/util/fs.hpp"\n#include <addjobs/x.hpp>\n',
        "apps/neuron-cache/ok.cpp": '#include "addjobs/add_job.hpp"\n#include "commands.hpp"\n',
        "libhubcache/src/stray.cpp": "",
    }
    with tempfile.TemporaryDirectory() as scratch:
        root = pathlib.Path(scratch)
        for name, text in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
        (root / "addjobs/src/up.cpp").write_text('#include "apps/neuron-cache/cli.hpp"\n#include "registry/a.hpp"\n')
        _, problems = check(root)
    expected = [
        "libhubcache/include/hubcache/hub/api.hpp: hub includes hubcache/aws/config.hpp from its sibling aws",
        "libhubcache/src/compilecache/up.cpp: compilecache includes registry/lookup.hpp from registry, a higher floor",
        "libhubcache/src/stray.cpp: not in a floor's folder",
        "libhubcache/src/util/up.cpp: util includes hubcache/storage/repository.hpp from storage, a higher floor",
    ]
    if sorted(problems) != expected:
        print("self-test: expected\n  " + "\n  ".join(expected) + "\ngot\n  " + "\n  ".join(sorted(problems)))
        return 1
    print(f"floors self-test: {len(expected)} broken rules found, none invented")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    checked, problems = check(root)
    for problem in problems:
        print(problem)
    print(f"floors: {checked} files checked, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
