#!/usr/bin/env python3
"""Checks that the library's includes point down its layers (docs/architecture.md, "Layout
and layering"), and that only src/rpc includes gRPC.

Each folder of src/ is a layer; a file may include headers of its own layer and of layers
below it, never above. Public headers (include/tensorweave/...) belong to the layer that
implements them. Tests (*_test.cc) may include anything above their layer (they drive it
from the outside), but gRPC only from src/rpc too. Also checks that the library reads the
environment only at its edge (getenv in src/ only where ENV_READERS allows; tools/, tests
and programs may). Exits 1 and names every offending include or read; prints "layers: ok"
otherwise.
"""
import os
import re
import sys

# Bottom to top, as built.
LAYERS = ["base", "core", "io", "checkpoint", "summary", "cluster", "framework", "graph", "ops",
          "runtime", "data", "distributed", "rpc", "train", "saved_model"]
RANK = {name: i for i, name in enumerate(LAYERS)}

# Public headers by the layer that implements them (the first match wins).
PUBLIC = [
    (r"tensorweave/(status|types)\.h$", "base"),
    (r"tensorweave/(tensor|tensor_shape)\.h$", "core"),
    (r"tensorweave/(cluster_spec|device_name|run_config|tls)\.h$", "cluster"),
    (r"tensorweave/(scope|gradient|graph_import)\.h$", "graph"),
    (r"tensorweave/(ops|ops/.*)\.h$", "ops"),
    (r"tensorweave/summary\.h$", "summary"),
    (r"tensorweave/session\.h$", "runtime"),
    (r"tensorweave/server\.h$", "rpc"),
    (r"tensorweave/(train/.*|tensorweave)\.h$", "train"),
    (r"tensorweave/saved_model\.h$", "saved_model"),
    (r"tensorweave/protobuf/.*\.h$", "base"),  # generated wire formats, below everything
]

# The only library files that may read the environment: TF_CONFIG and the runtime settings
# (TW_NUM_THREADS, TW_SHARED_MEMORY, TW_BUFFER_POOL_MB) are read by RunConfig; everything
# else takes options (docs/architecture.md, "Environment and process-wide options").
ENV_READERS = {"src/cluster/run_config.cc"}
GETENV = re.compile(r"\b(secure_)?getenv\s*\(")

INCLUDE = re.compile(r'^\s*#\s*include\s+[<"]([^>"]+)[>"]')
GRPC = re.compile(r"^(grpc|grpcpp)/")


def layer_of_include(path):
    """The layer an included path belongs to, or None for third-party headers."""
    m = re.match(r"src/(\w+)/", path)
    if m:
        return m.group(1)
    for pattern, layer in PUBLIC:
        if re.search(pattern, path) and path.startswith("tensorweave/"):
            return layer
    return None


def layer_of_file(path):
    m = re.match(r"src/(\w+)/", path)
    if m:
        return m.group(1)
    if path.startswith("include/"):
        return layer_of_include(path[len("include/"):])
    return None


def check(root):
    problems = []
    for top in ("src", "include"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith((".h", ".cc")):
                    continue
                path = os.path.relpath(os.path.join(dirpath, name), root)
                layer = layer_of_file(path)
                if layer is not None and layer not in RANK:
                    problems.append(f"{path}: folder src/{layer} is not in the layer list")
                    continue
                is_test = name.endswith("_test.cc")
                with open(os.path.join(root, path), encoding="utf-8") as f:
                    for number, line in enumerate(f, 1):
                        code = line.split("//", 1)[0]
                        if (GETENV.search(code) and not is_test and top == "src"
                                and path not in ENV_READERS):
                            problems.append(f"{path}:{number}: reads the environment (only "
                                            f"{', '.join(sorted(ENV_READERS))} and tools may)")
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        included = m.group(1)
                        if GRPC.match(included) and layer != "rpc":
                            problems.append(f"{path}:{number}: gRPC outside src/rpc: {included}")
                            continue
                        target = layer_of_include(included)
                        if is_test or layer is None or target is None or target not in RANK:
                            continue
                        if RANK[target] > RANK[layer]:
                            problems.append(f"{path}:{number}: {layer} includes {included} "
                                            f"({target} is above {layer})")
    return problems


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    problems = check(os.path.abspath(root))
    if problems:
        print("layers: includes against the layer order, or environment reads inside the "
              "library (docs/architecture.md):")
        for p in problems:
            print("  " + p)
        return 1
    print("layers: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
