"""A ``.gltf`` character export writes no file but its own, and is atomic as a whole (issue 33, items 4
and 7): the files beside the output are named after it and their bytes (``fabrik3d.io.character_files``);
an export killed with SIGKILL at any moment leaves the old document with its files or the new one with
its files, and no temporary that the next export does not remove."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.parse
from pathlib import Path

import numpy as np
import pytest
from helpers.character_asset import write_character
from helpers.cli import assert_one_line_error, run
from helpers.kills import kill_at_random, stale_ones_only, temporaries
from helpers.validator import validate

from fabrik3d.io.character import load_character
from fabrik3d.io.character_export import export_character
from fabrik3d.io.character_files import side_name
from fabrik3d.io.take import Take, save_take


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path, dict[str, bytes]]:
    """``a/model.gltf`` and ``b/model.gltf``, two characters each with its ``model.bin`` and ``model.png``;
    returns the folders and b's files' bytes."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    write_character(a, "model", "mixamo", external=True)
    write_character(b, "model", "blender", armature=True, external=True)
    return a, b, {p.name: p.read_bytes() for p in b.iterdir()}


def _uris(path: Path) -> list[str]:
    doc = json.loads(path.read_text())
    items = doc.get("buffers", []) + doc.get("images", [])
    return [urllib.parse.unquote(i["uri"]) for i in items if not i.get("uri", "data:").startswith("data:")]


def _take(character, frames: int) -> Take:
    """The rest pose held over ``frames`` frames at 30 fps (a take of the character's skeleton)."""
    sk = character.skeleton
    p = np.repeat(sk.rest_positions[None], frames, axis=0)
    r = np.repeat(sk.rest_frames[None], frames, axis=0)
    return Take(sk, np.arange(frames) / 30.0, p, r)


def test_an_export_into_another_character_s_folder_leaves_its_files_as_they_were(folders) -> None:
    a, b, before = folders
    hand = load_character(a / "model.gltf").effectors["hand_l"]
    proc = run("export", str(a / "model.gltf"), "--target", f"{hand}=0.5,1.3,0.3", "-o", str(b / "posed.gltf"))
    assert proc.returncode == 0, proc.stderr
    assert {n: (b / n).read_bytes() for n in before} == before  # b/model.bin, model.gltf, model.png unchanged
    made = sorted(set(p.name for p in b.iterdir()) - set(before))
    assert made == sorted(["posed.gltf", *_uris(b / "posed.gltf")])
    assert all(n.startswith("posed_") for n in made if n != "posed.gltf"), made
    copy = next(n for n in made if n.endswith("_model.bin"))
    assert (b / copy).read_bytes() == (a / "model.bin").read_bytes()
    assert len(load_character(b / "posed.gltf").meshes) == len(load_character(a / "model.gltf").meshes)
    report = validate(b / "posed.gltf", b / "model.gltf")
    for path in (b / "posed.gltf", b / "model.gltf"):
        assert report[str(path)]["errors"] == 0, report[str(path)]["messages"][:5]


def test_a_file_of_a_side_file_s_name_with_other_bytes_is_refused_and_kept(folders) -> None:
    a, b, _ = folders
    name = side_name("posed", "model.bin", (a / "model.bin").read_bytes())
    (b / name).write_bytes(b"the user's own bytes")
    proc = run("export", str(a / "model.gltf"), "-o", str(b / "posed.gltf"))
    assert_one_line_error(proc, rf"{name}: a file of this name is there already and is not this export's")
    assert (b / name).read_bytes() == b"the user's own bytes"
    assert not (b / "posed.gltf").exists()


def test_a_new_export_removes_only_the_side_files_of_its_output_that_it_no_longer_uses(folders) -> None:
    a, b, before = folders
    character = load_character(a / "model.gltf")
    out = b / "posed.gltf"
    export_character(character, out, take=_take(character, 20))
    first = set(_uris(out))
    # not this export's: another output's side file, a user's file named like one (its bytes do not hash to it)
    keep = {"posed_x_0123456789ab_fabrik3d.bin": b"x", "posed_0123456789ab_notes.bin": b"notes", "posed.txt": b"t"}
    for n, data in keep.items():
        (b / n).write_bytes(data)
    export_character(character, out, take=_take(character, 30))
    second = set(_uris(out))
    assert first != second and first & second  # the copies stay (the same bytes), the keys are new
    names = {p.name for p in b.iterdir()}
    assert names == set(before) | set(keep) | second | {"posed.gltf"}
    assert all((b / n).read_bytes() == data for n, data in keep.items())


EXPORT_LOOP = """
import sys
from fabrik3d.io.character import load_character
from fabrik3d.io.character_export import export_character
from fabrik3d.io.take import load_take
character, takes = load_character(sys.argv[1]), [load_take(p) for p in sys.argv[2:4]]
print("ready", flush=True)
k = 0
while True:
    export_character(character, sys.argv[4], take=takes[k % 2])
    k += 1
"""


def test_an_export_killed_at_any_moment_leaves_the_old_or_the_new_document_with_its_own_files(
    folders, tmp_path: Path
) -> None:
    a, b, before = folders
    character = load_character(a / "model.gltf")
    takes = [_take(character, 300), _take(character, 450)]
    refs = []
    for k, take in enumerate(takes):
        save_take(take, tmp_path / f"take{k}.json")
        ref = tmp_path / f"ref{k}"
        ref.mkdir()
        export_character(character, ref / "posed.gltf", take=take)  # (the same names in any folder)
        refs.append({p.name: p.read_bytes() for p in ref.iterdir()})
    assert refs[0]["posed.gltf"] != refs[1]["posed.gltf"]
    rng = np.random.default_rng(33)
    out = b / "posed.gltf"
    args = [str(a / "model.gltf"), str(tmp_path / "take0.json"), str(tmp_path / "take1.json"), str(out)]
    seen = set()
    for _ in range(10):
        kill_at_random(EXPORT_LOOP, args, tmp_path, rng, within=0.6)
        assert {n: (b / n).read_bytes() for n in before} == before
        stale_ones_only(b)
        if out.exists():  # the old document or the new one, whole, with the very bytes of its files
            ref = next((r for r in refs if r["posed.gltf"] == out.read_bytes()), None)
            assert ref is not None, "a document that is neither the old nor the new one"
            seen.add(refs.index(ref))
            assert all((b / n).read_bytes() == data for n, data in ref.items()), "a document without its bytes"
    assert seen, "no kill came after an export"
    export_character(character, out, take=takes[0])  # the next export leaves nothing of the killed ones
    assert {p.name for p in b.iterdir()} == set(before) | set(refs[0])
    assert not temporaries(b)
    assert validate(out)[str(out)]["errors"] == 0


EXPORT_KILLED_AT_STEP = """
import os, signal, sys
from fabrik3d.io import files
from fabrik3d.io.character import load_character
from fabrik3d.io.character_export import export_character
from fabrik3d.io.take import load_take
character, take, step = load_character(sys.argv[1]), load_take(sys.argv[2]), int(sys.argv[4])
done = [0]

def killing(call):
    def at_step(*args, **kwargs):
        if done[0] == step:
            os.kill(os.getpid(), signal.SIGKILL)
        done[0] += 1
        return call(*args, **kwargs)
    return at_step

files.write_atomic, os.replace, os.unlink = killing(files.write_atomic), killing(os.replace), killing(os.unlink)
export_character(character, sys.argv[3], take=take)
print("finished", done[0], flush=True)
"""


def test_an_export_killed_before_each_of_its_file_steps_leaves_the_old_or_the_new_document(
    folders, tmp_path: Path
) -> None:
    """Killed (SIGKILL) before its first file operation, its second, ... (a write, a rename, a removal),
    until one runs to the end: each time the old document with its files or the new one with its files."""
    a, b, before = folders
    character = load_character(a / "model.gltf")
    old, new = _take(character, 40), _take(character, 60)
    save_take(new, tmp_path / "new.json")
    ref = tmp_path / "ref"
    ref.mkdir()
    export_character(character, ref / "posed.gltf", take=new)
    want = {p.name: p.read_bytes() for p in ref.iterdir()}
    out = b / "posed.gltf"
    for step in range(40):
        export_character(character, out, take=old)  # the old document, whole
        had = {p.name: p.read_bytes() for p in b.iterdir()}
        args = [str(a / "model.gltf"), str(tmp_path / "new.json"), str(out), str(step)]
        proc = subprocess.run(
            [sys.executable, "-c", EXPORT_KILLED_AT_STEP, *args], capture_output=True, text=True, timeout=120
        )
        assert proc.returncode in (0, -9), proc.stderr[-3000:]
        assert {n: (b / n).read_bytes() for n in before} == before
        stale_ones_only(b)
        ref_files = want if out.read_bytes() == want["posed.gltf"] else had
        assert out.read_bytes() == ref_files["posed.gltf"], f"step {step}: neither the old nor the new document"
        assert all((b / n).read_bytes() == data for n, data in ref_files.items()), f"step {step}: files missing"
        if proc.returncode == 0:
            assert step > 3, proc.stdout  # (it was killed before the steps it has)
            break
    else:
        raise AssertionError("the export never ran to its end")
    export_character(character, out, take=old)  # the next export removes what the killed ones left
    assert not temporaries(b)
    assert {p.name for p in b.iterdir()} == set(before) | {"posed.gltf", *_uris(out)}
