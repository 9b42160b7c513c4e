"""`tw plot`'s drawing: the curves tools/plot_command.cc read from the event files, drawn
with Debian's matplotlib (Agg, so no display is needed) into a PNG.

    /usr/bin/python3 plot_curves.py CURVES.json OUT.png

CURVES.json holds {tag: {run: [[step, value], ...]}}: one panel per tag, one line per run.
`tw` runs this file from <dir of tw>/../libexec/tensorweave/ (tools/CMakeLists.txt puts it
there in the build tree and in an installed prefix); it is no module to import.
"""

import json
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 (after the backend is chosen)


def draw(curves, out):
    tags = sorted(curves)
    columns = min(3, len(tags))
    rows = math.ceil(len(tags) / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(5.5 * columns, 3.8 * rows), squeeze=False)
    for ax in axes.flat[len(tags):]:
        ax.axis("off")
    for ax, tag in zip(axes.flat, tags):
        for run, points in sorted(curves[tag].items()):
            # Sparse series (an evaluation every few thousand steps) show their points.
            ax.plot([p[0] for p in points], [p[1] for p in points], label=run, linewidth=1.2,
                    marker="o" if len(points) < 20 else None, markersize=3)
        ax.set_title(tag)
        ax.set_xlabel("step")
        ax.grid(True, alpha=0.3)
        if len(curves[tag]) > 1:
            ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(out, dpi=100)


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        draw(json.load(f), sys.argv[2])
