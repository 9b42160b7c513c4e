"""`tw plot`: event files written through the Python front-end's tf.summary.FileWriter,
drawn into a PNG, and the PNG read back. Skipped, saying why, where matplotlib is missing
(scripts/setup.sh installs python3-matplotlib)."""

import subprocess

import numpy as np
import pytest

import tensorweave.compat.v1 as tf

mpl_image = pytest.importorskip(
    "matplotlib.image", reason="python3-matplotlib is missing (scripts/setup.sh installs it)")

# matplotlib's first two line colours, as 8-bit RGB: the runs' lines.
BLUE, ORANGE = (31, 119, 180), (255, 127, 14)


def write_run(logdir, loss_scale):
    with tf.summary.FileWriter(str(logdir)) as writer:
        for step in range(0, 200, 10):
            summary = tf.Summary(value=[
                tf.Summary.Value(tag="loss", simple_value=loss_scale / (1 + step)),
                tf.Summary.Value(tag="accuracy", simple_value=step / 200.0)])
            writer.add_summary(summary, step)


def pixels_of(png, rgb):
    image = mpl_image.imread(str(png))[:, :, :3]
    return int(np.all(np.abs(image * 255 - np.array(rgb)) < 8, axis=2).sum())


def test_plot_draws_one_line_per_run_and_one_panel_per_tag(tw_tool, tmp_path):
    write_run(tmp_path / "runs" / "a", 2.0)
    write_run(tmp_path / "runs" / "b", 1.0)
    png = tmp_path / "curves.png"
    done = subprocess.run([tw_tool, "plot", str(tmp_path / "runs"), "--out", str(png)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "(2 tags, 2 runs)" in done.stdout, done.stdout
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    height, width = mpl_image.imread(str(png)).shape[:2]
    assert width > height > 200  # two panels side by side
    assert pixels_of(png, BLUE) > 200 and pixels_of(png, ORANGE) > 200  # both runs drawn


def test_plot_defaults_to_the_log_directory_and_keeps_what_precedes_a_torn_record(tw_tool,
                                                                                  tmp_path):
    write_run(tmp_path, 1.0)
    event_file = next(tmp_path.glob("events.out.tfevents.*"))
    with open(event_file, "ab") as f:
        f.write(b"\x10\x00\x00\x00\x00\x00\x00\x00torn")  # a record cut short
    done = subprocess.run([tw_tool, "plot", str(tmp_path)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "curves.png").exists()
    assert event_file.name in done.stderr and "using the events before it" in done.stderr


def test_plot_names_what_is_wrong(tw_tool, tmp_path):
    missing = subprocess.run([tw_tool, "plot", str(tmp_path / "nowhere")], capture_output=True,
                             text=True, timeout=60)
    assert missing.returncode == 1
    assert "no such log directory: %s" % (tmp_path / "nowhere") in missing.stderr
    empty = subprocess.run([tw_tool, "plot", str(tmp_path)], capture_output=True, text=True,
                           timeout=60)
    assert empty.returncode == 1
    assert "no event files in %s" % tmp_path in empty.stderr
