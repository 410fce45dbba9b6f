"""Before/after screenshots of natural posing in the real web UI (docs/natural-posing.md).

Writes two scene files of the humanoid with the same left-hand target to a temporary folder:
"after" with the preset's natural posing, "before" with none (the plain full-body FABRIK).
For each it starts the real server (``fabrik3d serve --scene FILE --no-browser`` on a free port
of 127.0.0.1), loads the page in Debian's headless chromium through playwright, waits for the
still frame of the 3D view and saves the view as ``docs/img/natural-{before,after}.png`` (the
same camera, orbited a little up from the UI's default, cut to the figure and the same size). It
checks that both pages show the library's own poses for that target and prints the numbers quoted
in the page (head movement, chest turn, right-hand movement from rest).

Run from the repository root: ``.venv/bin/python docs/shots/natural_posing_shots.py``
(needs the web extra, playwright and ``/usr/bin/chromium``: ``apt-get install chromium``).
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np
from PIL import Image

import fabrik3d
from fabrik3d import Posing, Scene, presets, save_scene

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "docs" / "img"
# The left hand's target: 20 cm in from its rest point (0.81, 1.43, -0.01), 5 cm up, 10 cm forward:
# toward the chest; the arm reaches it alone (metres, Y up, the humanoid faces +Z).
TARGET = (0.61, 1.48, 0.09)
SIZE = (800, 800)  # the saved images (pixels; square, as they stand side by side)
VIEWPORT = {"width": 2000, "height": 1300}  # the page (the 3D view is what the 400 px panel leaves)
ELEVATE = 0.12  # the camera's orbit up: a drag down by this fraction of the view's height
FRAME = (0.49, 0.47, 0.84)  # the part of the view kept: its centre (x, y) and height, fractions of the view
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--disable-sync"]
TIMEOUT = 60.0  # seconds, for every wait


def scenes(folder: Path) -> dict[str, Path]:
    """The two scene files: the humanoid (natural posing) and its plain copy, the same target."""
    natural = presets.get("humanoid")
    paths = {}
    for name, skeleton in (("after", natural), ("before", natural.with_posing(None))):
        paths[name] = folder / f"natural-{name}.json"
        save_scene(Scene(skeleton, {"hand_l": np.array(TARGET)}), paths[name])
    return paths


def solved() -> dict[str, fabrik3d.SolveResult]:
    """The library's solves of the target: natural (the preset's posing) and plain (``Posing()``)."""
    sk = presets.get("humanoid")
    modes = {"after": None, "before": Posing()}
    return {name: fabrik3d.solve(sk, {"hand_l": TARGET}, posing=p) for name, p in modes.items()}


def measure() -> dict[str, dict[str, float]]:
    """Head movement (m), chest turn (degrees) and right-hand movement (m) from rest, both ways."""
    sk = presets.get("humanoid")
    rest = fabrik3d.solve(sk, {})
    out = {}
    for name, r in solved().items():
        assert r.converged, name
        chest = sk.index("chest")
        dot = min(1.0, abs(float(np.dot(r.rotations[chest], rest.rotations[chest]))))
        out[name] = {
            "head_m": float(np.linalg.norm(r.positions[sk.index("head")] - rest.positions[sk.index("head")])),
            "chest_deg": math.degrees(2.0 * math.acos(dot)),
            "hand_r_m": float(np.linalg.norm(r.positions[sk.index("hand_r")] - rest.positions[sk.index("hand_r")])),
            "hand_l_error_m": r.errors["hand_l"],
        }
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def server(scene: Path, log: Path):
    """``fabrik3d serve --scene`` on a free port; yields the page URL (with its secret); always stopped."""
    exe = Path(sys.executable).with_name("fabrik3d")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "fabrik3d.cli"]
    cmd += ["serve", "--scene", str(scene), "--no-browser", "--port", str(free_port())]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + TIMEOUT
        url = None
        while url is None:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"server did not start:\n{log.read_text(errors='replace')[-2000:]}")
            found = re.search(r"the web UI is at (http://\S+/\?secret=\S+)", log.read_text(errors="replace"))
            if found:
                with contextlib.suppress(OSError), urllib.request.urlopen(found.group(1), timeout=2) as reply:
                    url = found.group(1) if reply.status == 200 else None
            time.sleep(0.2)
        yield url
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)


def shoot(browser, url: str) -> tuple[Image.Image, list[float], np.ndarray]:
    """The 3D view of the page at ``url`` once its target is solved, seen from ``ELEVATE`` higher up:
    the view's still image, the target handle's place in it (CSS pixels, to check the camera) and
    the pose the page shows (``(n, 3)``, metres)."""
    page = browser.new_page(viewport=VIEWPORT)
    page.set_default_timeout(TIMEOUT * 1000)
    try:
        for attempt in range(3):  # (a page whose view never gets its first image is loaded again)
            page.goto(url)
            page.wait_for_function("window.trame && window.trame.state && window.trame.state.get('joint_names')")
            page.wait_for_function("(window.trame.state.get('targets') || {}).hand_l !== undefined")
            try:
                page.wait_for_selector("#view3d img[src^='blob:']", state="attached", timeout=20_000)
                break
            except Exception:
                if attempt == 2:
                    raise
        page.evaluate(FRAMES_JS)
        wait_still(page)
        box = page.locator("#view3d").bounding_box()
        # Orbit the camera up: a drag on empty space (the view's left edge), the same in both shots.
        x, y = box["x"] + 0.05 * box["width"], box["y"] + 0.2 * box["height"]
        page.mouse.move(x, y)
        page.mouse.down()
        for k in range(1, 21):
            page.mouse.move(x, y + ELEVATE * box["height"] * k / 20)
            time.sleep(0.03)
        page.mouse.up()
        page.evaluate("() => { window.__last = performance.now(); }")
        wait_still(page)
        handle = page.evaluate("() => window.trame.trigger('target_screen_position', ['hand_l'])")
        pose = np.array(page.evaluate("() => window.trame.state.get('pose')"))
        png = page.screenshot(clip=box)
    finally:
        page.close()
    return Image.open(io.BytesIO(png)).convert("RGB"), handle, pose


# In-page: the time of the last image of the 3D view.
FRAMES_JS = """() => { window.__last = performance.now();
  document.querySelector('#view3d').addEventListener('load', () => { window.__last = performance.now(); }, true); }"""


def wait_still(page) -> None:
    """Until no new image of the view came for 1.5 s (the still, full-quality frame is shown)."""
    page.wait_for_function("document.querySelector('#view3d img').complete && performance.now() - window.__last > 1500")


def framed(img: Image.Image) -> Image.Image:
    """The part ``FRAME`` of the view (around the figure, of ``SIZE``'s aspect), at ``SIZE``."""
    w, h = img.size
    cx, cy, fh = FRAME
    ch = fh * h
    cw = ch * SIZE[0] / SIZE[1]
    box = (round(cx * w - cw / 2), round(cy * h - ch / 2), round(cx * w + cw / 2), round(cy * h + ch / 2))
    if box[0] < 0 or box[1] < 0 or box[2] > w or box[3] > h:
        raise SystemExit(f"FRAME {FRAME} leaves the {w}x{h} view")
    return img.crop(box).resize(SIZE, Image.LANCZOS)


def main() -> None:
    from playwright.sync_api import sync_playwright

    for name, m in measure().items():
        print(
            f"{name}: head moved {m['head_m']:.3f} m, chest turned {m['chest_deg']:.1f} deg, "
            f"right hand moved {m['hand_r_m']:.3f} m (left hand off its target by {m['hand_l_error_m']:.4f} m)"
        )
    OUT.mkdir(parents=True, exist_ok=True)
    handles = {}
    library = solved()
    with tempfile.TemporaryDirectory(prefix="fabrik3d-shots-") as tmp:
        paths = scenes(Path(tmp))
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS, headless=True)
            try:
                for name, scene in paths.items():
                    with server(scene, Path(tmp) / f"{name}.log") as url:
                        img, handles[name], pose = shoot(browser, url)
                    if not np.allclose(pose, library[name].positions, atol=1e-6):
                        raise SystemExit(f"{name}: the page's pose is not the library's solve of the target")
                    out = OUT / f"natural-{name}.png"
                    framed(img).save(out, optimize=True)
                    print(f"wrote {out.relative_to(ROOT)} ({out.stat().st_size // 1024} KB) from a {img.size} view")
            finally:
                browser.close()
    # The same target in the same camera: its handle must be at the same place in both views.
    if math.dist(handles["after"], handles["before"]) > 2.0:
        raise SystemExit(f"the cameras differ: the target's handle is at {handles}")


if __name__ == "__main__":
    main()
