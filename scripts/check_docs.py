#!/usr/bin/env python3
"""Checks that every repository path the documentation names exists (ctest Docs.PathsExist).

usage: check_docs.py [--root DIR] [--shared DIR] [FILE...]

Reads docs/*.md, every README.md (outside build folders, node_modules and fuzz/corpus) and the
leading comment block (or Python module docstring) of every .cpp/.hpp/.h/.c/.py/.sh file and
CMakeLists.txt of the repository at DIR (default: this script's checkout), or only the FILEs
given (relative to DIR). In them it finds markdown link targets, `backticked/paths.ext` and bare
dir/file.ext mentions, and looks each one up relative to the mentioning file's folder, to the
repository root, to every module's include/ folder (header names like slanim/core/clip.hpp) and,
for a bare file name of source or documentation (clip.cpp, relay.md), by its name anywhere in
the repository. Paths under ../shared are looked up in the shared data folder (--shared, default
DIR/../shared) and skipped when that folder is absent.

Not checked: URLs, anchors (#...), globs and placeholders (*, {a,b}, <name>, %f, OUT.anim,
FILE.glb), build outputs (build/..., build-asan/...), absolute paths, bare data-file names
without a folder (DANCE1.anim, demo.csv), and the names in ALLOWED below.

Prints `file:line: path not found: X` per problem; exit 0 when there is none, 1 otherwise,
2 on usage errors. Standard library only.
"""
import argparse
import os
import re
import subprocess
import sys

# Folders never read, and whose files do not count as the repository's.
SKIP_DIRS = {".git", "node_modules", ".cache"}
SKIP_PREFIXES = ("fuzz/corpus/",)

# Extensions of source, build and documentation files: a bare name with one of them (no folder,
# e.g. `clip.cpp`) is looked up by its name anywhere in the repository.
SOURCE_EXTS = {"cpp", "hpp", "h", "c", "inc", "py", "sh", "md", "cmake", "mjs", "map", "supp",
               "in"}
# Extensions that make a token with a folder (`tests/data/x.anim`) a file path. Data files are
# checked only with a folder: a bare `DANCE1.anim` names a file of the reader's, not the repo's.
PATH_EXTS = SOURCE_EXTS | {"json", "txt", "anim", "bvh", "bvj", "xml", "llm", "dat", "glb", "gltf",
                           "csv", "png", "obj", "jsonl", "llsd", "tsv", "pc", "yml", "yaml", "toml"}

# Placeholder words of command synopses: OUT.anim, FILE.glb, IN.bvh, DIR/avatar_lad.xml.
# P is the install prefix of `cmake --install build --prefix P`.
PLACEHOLDERS = {"FILE", "OUT", "IN", "POSE", "DIR", "NAME", "PATTERN", "SOURCE", "LIST", "PATH",
                "P", "X", "Y", "T", "N", "TARGET", "SHARED_DIR", "CORPUS_DIR", "CANDIDATE_DIR"}

# The explicit allow-list, applied to names that are not found: names that deliberately are not
# files of this repository.
ALLOWED = [
    # The SL viewer's source files, cited by comments as the origin of a behaviour
    # (llkeyframemotion.cpp, llcommon/llquantize.h, indra/newview/..., llmath's m3math.cpp).
    re.compile(r"^(indra/)?((ll[a-z]+|newview)/)?ll[a-z0-9_]*\.(cpp|h|inl)$"),
    re.compile(r"^[mv][0-9][a-z]*math\.(cpp|h)$"),
    re.compile(r"^indra/"),
    # Written by the build next to the copied Python package (build/python/slanim/).
    re.compile(r"^_build_config\.py$"),
]

# Characters that glue a token to a glob or placeholder (`*.anim`, `{a,b}.cpp`, `%f.obj`,
# `slanim_<module>_tests`, `$BUILD/x`): such a token is not a literal path.
GLOB_NEIGHBOURS = set("*?{}%$@\\|")

TOKEN = re.compile(r"[A-Za-z0-9_./+~-]+")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://\S*")


def list_files(root):
    """Returns the repository's files (relative, '/'-separated): git's tracked and untracked
    non-ignored files when root is a git work tree, else a walk without build folders."""
    try:
        out = subprocess.run(
            ["git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            check=True, capture_output=True).stdout.decode()
        files = [f for f in out.split("\0") if f]
        if files:
            return {f for f in files if os.path.exists(os.path.join(root, f))}
    except (OSError, subprocess.CalledProcessError):
        pass
    files = set()
    for d, dirs, names in os.walk(root):
        dirs[:] = [x for x in dirs if x not in SKIP_DIRS and not is_build_dir(x)]
        for n in names:
            files.add(os.path.relpath(os.path.join(d, n), root).replace(os.sep, "/"))
    return files


def is_build_dir(name):
    return name == "build" or name.startswith("build-") or name == "out"


def documents(files):
    """The files to read: markdown pages and the sources whose header comments are read."""
    picked = []
    for f in sorted(files):
        if f.startswith(SKIP_PREFIXES) or any(
                p in SKIP_DIRS or is_build_dir(p) for p in f.split("/")[:-1]):
            continue
        name = f.rsplit("/", 1)[-1]
        if (f.startswith("docs/") and f.endswith(".md")) or name == "README.md":
            picked.append(f)
        elif name == "CMakeLists.txt" or name.rsplit(".", 1)[-1] in {"cpp", "hpp", "h", "c", "py",
                                                                      "sh"}:
            picked.append(f)
    return picked


def header_lines(path, text):
    """(line number, text) of a source file's leading comment block: its first comment lines
    (// or #, a /* */ block, a Python module docstring), after a shebang and blank lines."""
    lines = text.splitlines()
    out = []
    i = 0
    hash_comments = path.endswith((".py", ".sh", "CMakeLists.txt"))
    in_block = None  # closing delimiter of an open block comment or docstring
    while i < len(lines):
        s = lines[i].strip()
        if in_block:
            out.append((i + 1, s))
            if in_block in s:
                in_block = None
        elif i == 0 and s.startswith("#!"):
            pass
        elif not s:
            if out:
                # A blank line ends the block unless the next line continues the comments.
                nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
                if not (nxt.startswith("#") if hash_comments else nxt.startswith("//")):
                    break
        elif hash_comments and s.startswith("#"):
            out.append((i + 1, s))
        elif not hash_comments and s.startswith("//"):
            out.append((i + 1, s))
        elif not hash_comments and s.startswith("/*"):
            out.append((i + 1, s))
            if "*/" not in s[2:]:
                in_block = "*/"
        elif path.endswith(".py") and s.startswith(('"""', "'''")):
            out.append((i + 1, s))
            if s.count(s[:3]) < 2:
                in_block = s[:3]
        else:
            break
        i += 1
    return out


class Checker:
    def __init__(self, root, shared):
        self.root = root
        self.shared = shared if shared and os.path.isdir(shared) else None
        self.files = list_files(root)
        self.dirs = set()
        for f in self.files:
            parts = f.split("/")
            for k in range(1, len(parts)):
                self.dirs.add("/".join(parts[:k]))
        self.names = {f.rsplit("/", 1)[-1] for f in self.files}
        self.top = {f.split("/", 1)[0] for f in self.files}
        self.include_roots = sorted(d for d in self.dirs if d.split("/")[-1] == "include")

    def exists(self, rel):
        rel = os.path.normpath(rel).replace(os.sep, "/")
        return rel in self.files or rel in self.dirs or rel == "."

    def resolves(self, token, doc_dir):
        """True when token names a file or folder of the repository (or of ../shared)."""
        if token.startswith("../shared/") or token == "../shared":
            if self.shared is None:
                return True  # data: checked only where the shared folder is present
            return os.path.exists(os.path.join(self.shared, token[len("../shared/"):]))
        path = token.rstrip("/")
        bases = [doc_dir, ""] + self.include_roots
        if any(self.exists(os.path.join(b, path)) for b in bases):
            return True
        if "/" not in path:
            return path in self.names
        if self.shared is not None:
            return os.path.exists(os.path.join(self.shared, path))
        # Without ../shared a data path (anims/linden/X.anim) cannot be told from a stale one
        # unless it starts with a folder of the repository's root or of the mentioning file's
        # folder (src/, include/), or with slanim/ (a header name).
        first = [p for p in path.split("/") if p not in ("", ".", "..")][0]
        return not (first == "slanim" or first in self.dirs or
                    os.path.normpath(os.path.join(doc_dir, first)) in self.dirs)

    def candidates(self, line, markdown):
        """Yields the path-like tokens of one line."""
        if markdown:
            for m in LINK.finditer(line):
                target = m.group(1).split("#", 1)[0]
                if target and not URL.match(target) and not target.startswith("mailto:"):
                    yield target, True
            line = LINK.sub(lambda m: " " * len(m.group(0)), line)
        line = URL.sub(lambda m: " " * len(m.group(0)), line)
        for m in TOKEN.finditer(line):
            tok = m.group(0)
            before = line[m.start() - 1] if m.start() > 0 else " "
            after = line[m.end()] if m.end() < len(line) else " "
            if before in GLOB_NEIGHBOURS or after in GLOB_NEIGHBOURS:
                continue
            if (after == "<" or before == ">") and not (before == "<" and after == ">"):
                continue  # glued to a <placeholder>
            if before == ":" or after == ":" and line[m.end():m.end() + 2] == "::":
                continue  # replay:FILE, C++ scopes
            yield tok, False

    def is_path(self, tok, from_link):
        """Whether a token is a literal repository path worth looking up."""
        tok = tok.rstrip(".,;")
        if not tok or tok.startswith(("/", "~")) or tok in (".", ".."):
            return None
        if tok == "../shared" or tok.startswith("../shared/"):
            return tok
        parts = [p for p in tok.split("/") if p not in ("", ".", "..")]
        if not parts:
            return None
        if is_build_dir(parts[0]) or any(p in SKIP_DIRS for p in parts):
            return None
        for p in parts:
            stem = p.split(".", 1)[0]
            if stem in PLACEHOLDERS or p in PLACEHOLDERS:
                return None
        last = parts[-1]
        ext = last.rsplit(".", 1)[-1] if "." in last[1:] else ""
        if from_link:
            return tok
        if "/" not in tok:
            return tok if ext in SOURCE_EXTS and not last.startswith(".") else None
        if ext in PATH_EXTS or last == "CMakeLists.txt":
            return tok
        # A folder: an explicit one of two or more levels (`engine/core/`; a lone `src/` names
        # every module's) or one that starts at a top-level folder (`tools/net`).
        if not ext and ((tok.endswith("/") and len(parts) > 1) or parts[0] in self.top):
            return tok
        return None

    def check_file(self, rel):
        path = os.path.join(self.root, rel)
        try:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
        except (OSError, UnicodeDecodeError) as e:
            return [f"{rel}:0: unreadable: {e}"]
        markdown = rel.endswith(".md")
        lines = list(enumerate(text.splitlines(), 1)) if markdown else header_lines(rel, text)
        doc_dir = os.path.dirname(rel)
        problems = []
        for number, line in lines:
            seen = set()
            for tok, from_link in self.candidates(line, markdown):
                tok = self.is_path(tok, from_link)
                if tok is None or tok in seen:
                    continue
                seen.add(tok)
                if not self.resolves(tok, doc_dir) and not any(r.search(tok) for r in ALLOWED):
                    problems.append(f"{rel}:{number}: path not found: {tok}")
        return problems


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--root", default=os.path.dirname(here), help="repository to check")
    ap.add_argument("--shared", help="shared data folder (default ROOT/../shared)")
    ap.add_argument("files", nargs="*", help="files to check, relative to ROOT (default: all)")
    args = ap.parse_args(argv)
    root = os.path.abspath(args.root)
    if not os.path.isdir(root):
        print(f"check_docs: no such folder: {root}", file=sys.stderr)
        return 2
    checker = Checker(root, args.shared or os.path.join(root, "..", "shared"))
    files = args.files or documents(checker.files)
    problems = []
    for f in files:
        problems += checker.check_file(f)
    for p in problems:
        print(p)
    print(f"check_docs: {len(files)} files, {len(problems)} missing paths", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
