#!/usr/bin/env python3
"""Checks that every repository path the docs name exists: README.md and docs/*.md.

A repository path is a word that starts with one of the repository's top folders (TOPS)
and a slash, as in `src/rpc/task_port.h`, tools/k8s/ or (docs/launch.md). Not taken for one:
a word that continues a longer path or address (`build/tools/tw`, /tmp/src/x, a URL,
$P/include/x: the top folder follows a '/', a letter, a '.', a '$', ...), a placeholder
(`src/...`), a path in another repository (written `owner/name : path`, as docs/python.md's
table of programs does), and the words of WORDS_NOT_PATHS. In a path, `{a,b}` names each
alternative, `*` and `<name>` stand for any part of a file name; a trailing `:123` (a line)
and `#anchor` are dropped. A path with no extension may name the program built from its
.cc file (`examples/mnist_ps`, `bench/tcp_path_bench`). Exits 1 and names every path that is
missing, with its file and line; prints "doc paths: ok" otherwise.
"""
import glob
import os
import re
import sys

TOPS = ["bench", "cmake", "docs", "examples", "fuzz", "include", "proto", "python",
        "scripts", "src", "testing", "tests", "tools"]

# A top folder at the start of a word, then path characters. The look-behind keeps out
# words that continue a longer path or an address.
PATH = re.compile(r"(?<![\w./$~:@<>{}\\-])(?:" + "|".join(TOPS) +
                  r")/[\w./*{},<>+-]*")

# What comes before a path in another repository: "kubeflow/training-operator : ".
OTHER_REPOSITORY = re.compile(r"[\w.-]+/[\w.-]+ : $")

# Words that begin like a path and are none: a rate ("examples/s").
WORDS_NOT_PATHS = {"examples/s", "examples/sec"}


def alternatives(path):
    """`a.{h,cc}` -> [a.h, a.cc]; nested braces are not used in the docs."""
    m = re.search(r"\{([^{}]*)\}", path)
    if not m:
        return [path]
    return [v for choice in m.group(1).split(",")
            for v in alternatives(path[:m.start()] + choice + path[m.end():])]


def candidates(line):
    """The repository paths a line of Markdown names, as written and as patterns."""
    for m in PATH.finditer(line):
        word = m.group(0)
        word = re.sub(r"#.*$", "", word)
        word = re.sub(r"[.,:;)]+$", "", word)  # the sentence's punctuation
        word = re.sub(r":\d+$", "", word)  # a line number
        if ("..." in word or word in WORDS_NOT_PATHS
                or OTHER_REPOSITORY.search(line[:m.start()])):
            continue
        yield word, [re.sub(r"<[^<>]*>", "*", a) for a in alternatives(word)]


def exists(root, pattern):
    if any(c in pattern for c in "*?["):
        return bool(glob.glob(os.path.join(root, pattern)))
    path = os.path.join(root, pattern)
    if os.path.exists(path):
        return True
    return not os.path.splitext(pattern)[1] and os.path.exists(path + ".cc")  # a program


def check(root):
    docs = ["README.md"] + sorted(
        os.path.join("docs", n) for n in os.listdir(os.path.join(root, "docs"))
        if n.endswith(".md"))
    problems = []
    for doc in docs:
        with open(os.path.join(root, doc), encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                for word, patterns in candidates(line):
                    missing = [p for p in patterns if not exists(root, p)]
                    if missing:
                        problems.append(f"{doc}:{number}: {word}" +
                                        (f" ({', '.join(missing)})" if patterns != [word]
                                         else ""))
    return problems


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    problems = check(os.path.abspath(root))
    if problems:
        print("doc paths: the docs name repository paths that do not exist:")
        for p in problems:
            print("  " + p)
        return 1
    print("doc paths: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
