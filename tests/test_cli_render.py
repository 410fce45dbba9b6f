"""``fabrik3d render`` (issue 54): a still's passes, a keyed scene's frames as numbered PNG sequences, a
progress bar only on a terminal, bad input as one line and exit 2 with nothing written, and a run killed
mid-sequence leaving complete PNGs only."""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from helpers.cli import assert_one_line_error, run
from helpers.kills import stale_ones_only

from fabrik3d.animation import Animation, Key
from fabrik3d.io.scene import Scene, save_scene
from fabrik3d.model import presets

pytest.importorskip("vtkmodules")
Image = pytest.importorskip("PIL.Image")


@pytest.fixture(scope="module")
def keyed(tmp_path_factory) -> Path:
    """A humanoid's scene whose left hand is keyed from rest to the chest, overhead and back (frames 0..120)."""
    body = presets.get("humanoid")
    at = {n: body.rest_positions[body.index(n)] for n in ("hand_l", "toe_l", "toe_r")}
    anim = Animation(
        (
            Key(0, {"hand_l": at["hand_l"], "toe_l": at["toe_l"], "toe_r": at["toe_r"]}),
            Key(40, {"hand_l": [0.25, 1.25, 0.45]}),
            Key(80, {"hand_l": [0.3, 1.75, 0.15]}),
            Key(120, {"hand_l": at["hand_l"]}),
        )
    )
    path = tmp_path_factory.mktemp("keyed") / "reach.json"
    save_scene(Scene(body, animation=anim), path)
    return path


def png(path: Path) -> np.ndarray:
    with Image.open(path) as image:
        image.load()
        return np.array(image)


def test_a_sequence_of_numbered_pngs(keyed: Path, tmp_path: Path) -> None:
    out = tmp_path / "frames"
    proc = run("render", str(keyed), "--frames", "0:10", "--size", "96x64", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""  # (no terminal: no progress bar)
    assert "wrote 55 files" in proc.stdout and "frames 0..10 at 96x64" in proc.stdout
    kinds = ("openpose.png", "openpose.json", "depth.png", "normal.png", "outline.png")
    expected = sorted(f"{k.split('.')[0]}_{f:04d}.{k.split('.')[1]}" for k in kinds for f in range(11))
    assert sorted(p.name for p in out.iterdir()) == expected
    depth = [png(out / f"depth_{f:04d}.png") for f in (0, 10)]
    assert depth[0].shape == (64, 96) and depth[0].dtype == np.uint8 and depth[0].max() == 255
    assert not np.array_equal(depth[0], depth[1])  # (the hand moved)
    assert png(out / "normal_0005.png").shape == (64, 96, 3)
    people = json.loads((out / "openpose_0003.json").read_text())
    assert people["canvas_width"] == 96 and len(people["people"]) == 1


def test_a_still_with_16_bit_depth_and_chosen_passes(tmp_path: Path) -> None:
    proc = run("render", "humanoid", "--passes", "normal,depth", "--size", "80", "--depth-bits", "16",
               "--view", "side", "--hand", "l=fist", "-o", str(tmp_path / "new" / "still"))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    folder = tmp_path / "new" / "still"
    assert sorted(p.name for p in folder.iterdir()) == ["depth.png", "normal.png"]
    depth = png(folder / "depth.png")
    assert depth.shape == (80, 80) and depth.max() == 65535
    proc = run("render", "humanoid", "--passes", "openpose", "--feet", "--occlusion", "--view", "side", "-o",
               str(folder))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    person = json.loads((folder / "openpose.json").read_text())["people"][0]
    pose = np.reshape(person["pose_keypoints_2d"], (-1, 3))
    assert pose.shape == (25, 3) and 0 < (pose[:, 2] == 0).sum() < 25  # (seen from the side: some hidden)


@pytest.mark.parametrize(
    ("args", "pattern"),
    [
        (["--size", "5000x512"], r"--size: expected WIDTHxHEIGHT, whole pixels from 16 to 4096, got '5000x512'"),
        (["--size", "0x0"], r"--size: .* got '0x0'"),
        (["--size", "nan"], r"--size: .* got 'nan'"),
        (["--size", "512x"], r"--size: .* got '512x'"),
        (
            ["--passes", "depth,canny"],
            r"--passes: expected some of openpose,depth,normal,outline, got unknown pass 'canny'",
        ),
        (["--passes", ","], r"--passes: .* got none"),
        (["--view", "back"], r"--view: invalid choice"),
        (["--frames", "0:10"], r"humanoid: no keys to bake"),
        (["--frames", "5:1"], r"humanoid: no keys to bake"),
    ],
)
def test_bad_input_one_line_exit_2_nothing_written(tmp_path: Path, args: list[str], pattern: str) -> None:
    out = tmp_path / "out"
    proc = run("render", "humanoid", *args, "-o", str(out))
    assert_one_line_error(proc, pattern)
    assert not out.exists()


def test_an_output_folder_that_is_a_file_or_a_bad_range(keyed: Path, tmp_path: Path) -> None:
    file = tmp_path / "taken"
    file.write_text("mine")
    assert_one_line_error(run("render", str(keyed), "-o", str(file)), r"-o .*taken: not a folder \(a file is there\)")
    assert file.read_text() == "mine"
    out = tmp_path / "out"
    assert_one_line_error(run("render", str(keyed), "--frames", "9:3", "-o", str(out)), r"reach\.json: .*frames")
    proc = run("render", str(keyed), "--frames", "0:2", "--target", "hand_l=0,1,0.5", "-o", str(out))
    assert_one_line_error(proc, r"--target, --turn, --look and --hand pose a still")
    assert not out.exists()


def test_a_progress_bar_on_a_terminal_only(keyed: Path, tmp_path: Path) -> None:
    leader, follower = pty.openpty()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "fabrik3d.cli", "render", str(keyed), "--frames", "0:3", "--size", "32",
             "--passes", "depth", "-o", str(tmp_path / "bar")],
            stdout=subprocess.PIPE, stderr=follower, timeout=120, text=True,
        )  # fmt: skip
        os.close(follower)
        follower = -1
        said = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:
                break
            if not chunk:
                break
            said += chunk
    finally:
        os.close(leader)
        if follower >= 0:
            os.close(follower)
    assert proc.returncode == 0
    assert b"4/4 frames" in said and b"[####################]" in said, said


def test_a_killed_run_leaves_complete_pngs_only(keyed: Path, tmp_path: Path) -> None:
    out = tmp_path / "killed"
    proc = subprocess.Popen(
        [sys.executable, "-m", "fabrik3d.cli", "render", str(keyed), "--frames", "0:120", "--size", "256",
         "-o", str(out)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len(list(out.glob("*.png"))) < 12:
            assert proc.poll() is None, proc.stderr.read()  # type: ignore[union-attr]
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)  # (mid-sequence, while it writes)
    finally:
        proc.kill()
        proc.wait(timeout=60)
        proc.stderr.close()  # type: ignore[union-attr]
    assert proc.returncode == -signal.SIGKILL
    pngs = sorted(out.glob("*.png"))
    assert 12 <= len(pngs) < 4 * 121
    for path in pngs:
        with Image.open(path) as image:
            image.load()  # (a truncated PNG would raise here)
        assert image.size == (256, 256)
    stale_ones_only(out)
    for path in out.glob("*.json"):
        json.loads(path.read_text())
