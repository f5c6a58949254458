#!/usr/bin/env python3
"""Tests of scripts/check_docs.py (ctest Docs.CheckFindsPlantedBrokenPaths).

Builds a small repository in a temporary folder (no git: the checker walks it), plants a broken
path of every kind the checker reads (markdown link, backticked path, bare folder/file mention,
bare source file name, a .cpp header comment, a CMakeLists.txt header, a Python docstring, a
module README) beside valid ones and the forms it must ignore (URLs, anchors, globs,
placeholders, build outputs, code after the header, ../shared without a shared folder), and
checks the exact report and exit status; then the same tree with the broken paths repaired
must pass.
usage: check_docs_test.py   (exit 0 when every case holds)
"""
import os
import subprocess
import sys
import tempfile
import unittest

CHECKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
                       "check_docs.py")

# path -> text; "@BROKEN@" marks where a broken reference is planted (repaired: a valid one).
TREE = {
    "README.md": "# fixture\n"
                 "See [the guide](docs/guide.md#start) and [gone](docs/gone.md).\n"
                 "Run `scripts/run.sh --flag`, then `tools/missing_tool.py`.\n"
                 "Ignored: https://example.com/a/b.md, `build/tools/x.cpp`, `*.anim`,\n"
                 "`OUT.anim`, `FILE.glb`, `slanim_<module>_tests`, `../shared/anims/DANCE1.anim`,\n"
                 "`DANCE1.anim`, [anchor](#section), `lib/{a,b}.cpp`.\n",
    "docs/guide.md": "# guide\n"
                     "Code in engine/core/src/clip.cpp and engine/core/src/stale.cpp.\n"
                     "Back to [the start](../README.md); a bare name: clip.cpp, moved.hpp.\n"
                     "Folders: `engine/core/`, `engine/gone/`.\n",
    "engine/core/README.md": "# core\n"
                             "Entry point: `include/slanim/core/clip.hpp`, `src/old.cpp`.\n",
    "engine/core/include/slanim/core/clip.hpp": "// The clip. See slanim/core/sampling.hpp.\n"
                                                "#pragma once\n",
    "engine/core/src/clip.cpp": "// SPDX-License-Identifier: MIT\n"
                                "// Implements slanim/core/clip.hpp (docs/guide.md) and\n"
                                "// docs/missing.md; cites the viewer's llkeyframemotion.cpp.\n"
                                "#include \"slanim/core/clip.hpp\"\n"
                                "// after the header: docs/not_checked.md\n",
    "engine/core/CMakeLists.txt": "# Builds src/clip.cpp and src/gone.cpp.\nadd_library(x)\n",
    "scripts/run.sh": "#!/usr/bin/env bash\n# Runs tools/gone.sh.\necho\n",
    "tools/helper.py": '"""Helper; reads docs/guide.md and docs/none.md.\n"""\nimport os\n',
}
REPAIRS = {
    "docs/gone.md": "docs/guide.md",
    "tools/missing_tool.py": "tools/helper.py",
    "engine/core/src/stale.cpp": "engine/core/src/clip.cpp",
    "moved.hpp": "clip.hpp",
    "engine/gone/": "engine/core/src/",
    "src/old.cpp": "src/clip.cpp",
    "slanim/core/sampling.hpp": "slanim/core/clip.hpp",
    "docs/missing.md": "docs/guide.md",
    "src/gone.cpp": "src/clip.cpp",
    "tools/gone.sh": "tools/helper.py",
    "docs/none.md": "docs/guide.md",
}
EXPECTED = [
    "README.md:2: path not found: docs/gone.md",
    "README.md:3: path not found: tools/missing_tool.py",
    "docs/guide.md:2: path not found: engine/core/src/stale.cpp",
    "docs/guide.md:3: path not found: moved.hpp",
    "docs/guide.md:4: path not found: engine/gone/",
    "engine/core/CMakeLists.txt:1: path not found: src/gone.cpp",
    "engine/core/README.md:2: path not found: src/old.cpp",
    "engine/core/include/slanim/core/clip.hpp:1: path not found: slanim/core/sampling.hpp",
    "engine/core/src/clip.cpp:3: path not found: docs/missing.md",
    "scripts/run.sh:2: path not found: tools/gone.sh",
    "tools/helper.py:1: path not found: docs/none.md",
]


def write_tree(root, repaired):
    for rel, text in TREE.items():
        if repaired:
            for bad, good in REPAIRS.items():
                text = text.replace(bad, good)
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)


def run_checker(root, *extra):
    return subprocess.run([sys.executable, CHECKER, "--root", root,
                           "--shared", os.path.join(root, "no-shared"), *extra],
                          capture_output=True, text=True)


class CheckDocs(unittest.TestCase):
    def test_reports_every_planted_broken_path_and_fails(self):
        with tempfile.TemporaryDirectory() as root:
            write_tree(root, repaired=False)
            r = run_checker(root)
            self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
            self.assertEqual(sorted(r.stdout.splitlines()), sorted(EXPECTED))

    def test_passes_once_the_paths_are_repaired(self):
        with tempfile.TemporaryDirectory() as root:
            write_tree(root, repaired=True)
            r = run_checker(root)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertEqual(r.stdout, "")

    def test_checks_only_the_files_named(self):
        with tempfile.TemporaryDirectory() as root:
            write_tree(root, repaired=False)
            r = run_checker(root, "docs/guide.md")
            self.assertEqual(r.returncode, 1)
            self.assertEqual(r.stdout.splitlines(),
                             [e for e in EXPECTED if e.startswith("docs/guide.md:")])

    def test_shared_paths_are_checked_when_the_shared_folder_exists(self):
        with tempfile.TemporaryDirectory() as top:
            root = os.path.join(top, "repo")
            write_tree(root, repaired=True)
            os.makedirs(os.path.join(top, "shared", "anims"))
            r = subprocess.run([sys.executable, CHECKER, "--root", root, "README.md"],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 1)
            self.assertEqual(r.stdout.splitlines(),
                             ["README.md:5: path not found: ../shared/anims/DANCE1.anim"])


if __name__ == "__main__":
    unittest.main()
