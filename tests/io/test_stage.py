"""Stages (issue 52): scene files of version 4 with figures, props and contacts; versions 1-3 as one figure."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fabrik3d
from fabrik3d.io.scene import Scene, load_scene, save_scene, scene_or_preset
from fabrik3d.model import presets
from fabrik3d.model.keys import Animation, Key
from fabrik3d.stage import (
    SHAPES,
    Contact,
    Figure,
    Hold,
    Placement,
    Prop,
    Stage,
    Transform,
    load_stage,
    parse_stage,
    save_stage,
    standing,
)

HUMANOID = scene_or_preset("humanoid")
BEN_HAND = {"figure": "Ben", "joint": "hand_l"}


def two_figures(**kw: object) -> Stage:
    return Stage(
        [Figure("Ada", HUMANOID), Figure("Ben", scene_or_preset("humanoid"), Placement([0.0, 0.0, 0.9], 180))],
        **kw,  # type: ignore[arg-type]
    )


def test_a_stage_round_trips_with_figures_props_and_contacts(tmp_path: Path) -> None:
    hand = HUMANOID.skeleton.rest_positions[HUMANOID.skeleton.index("hand_l")]
    keyed = Scene(HUMANOID.skeleton, animation=Animation((Key(0, {"hand_l": hand}), Key(10, {"hand_l": hand + 0.1}))))
    small = Scene(presets.humanoid(height=1.5, arm=1.1))
    stage = Stage(
        [Figure("Ada", keyed), Figure("Ben", small, Placement([1.0, 0.0, 0.5], 90), tint=[0.2, 0.4, 0.6], locked=True)],
        [
            standing("chair", "block", 0.5, 0.3),
            Prop(
                "stick",
                "cylinder",
                transform=Transform([0, 0.1, 0], [0.3, 0, 0, 0.95], 1.5),
                parent=Hold("Ada", "hand_r"),
            ),
            Prop("wall", "wall", transform=Transform([0, 1.2, -2], [0, 0.26, 0, 0.97])),
        ],
        [Contact("Ada", "hand_l", "Ben", "hand_r"), Contact("Ben", "hand_l", on_prop="wall", offset=[0.1, 0.2, 0.05])],
    )
    path = tmp_path / "stage.json"
    save_stage(stage, path)
    data = json.loads(path.read_text())
    assert data["version"] == 4 and [f["name"] for f in data["figures"]] == ["Ada", "Ben"]
    back = load_stage(path)
    assert back.to_dict() == stage.to_dict()
    assert back.figures[1].scene.proportions is not None  # the body's proportions survive
    assert back.figures[0].scene.animation.keys[1].frame == 10
    assert back.props[1].parent == Hold("Ada", "hand_r")
    assert back.props[0].transform.position[1] == pytest.approx(0.225)  # a chair-height block stands on the floor


@pytest.mark.parametrize("version", [1, 2, 3])
def test_versions_one_to_three_load_as_one_figure(tmp_path: Path, version: int) -> None:
    data = HUMANOID.to_dict()
    data["version"] = version
    for newer in [k for k in ("posing", "animation", "character", "proportions") if version < 3]:
        data.pop(newer, None)
    if version == 1:
        data.pop("posing", None)
    path = tmp_path / "old.json"
    path.write_text(json.dumps(data))
    stage = load_stage(path)
    assert [f.name for f in stage.figures] == ["figure"] and stage.is_plain
    assert stage.figures[0].scene.skeleton.names == HUMANOID.skeleton.names
    assert load_scene(path).skeleton.names == HUMANOID.skeleton.names  # and load_scene as ever


def test_load_scene_and_save_scene_keep_working_for_one_figure(tmp_path: Path) -> None:
    path = tmp_path / "one.json"
    save_scene(HUMANOID, path)
    assert json.loads(path.read_text())["version"] == 3  # save_scene still writes a scene
    save_stage(Stage.of_scene(HUMANOID), path)  # a stage of one figure at the origin
    assert load_scene(path).to_dict() == HUMANOID.to_dict()
    save_stage(two_figures(), path)
    with pytest.raises(ValueError, match=r"several figures.*load_stage"):
        load_scene(path)
    save_stage(Stage([Figure("Ada", HUMANOID, Placement([1.0, 0.0, 0.0]))]), path)
    with pytest.raises(ValueError, match="placed away from the origin"):
        load_scene(path)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["figures"].append(d["figures"][0]), r"figures\[2\]\.name: 'Ada' is taken"),
        (lambda d: d["figures"][1]["joints"][3].update(parent="hipp"), r"figures\[1\]\.joints\[3\]\.parent"),
        (lambda d: d["figures"][0].update(version=3), r"figures\[0\]\.version: the file's"),
        (lambda d: d["figures"][0].update(facing="north"), r"figures\[0\]\.facing"),
        (lambda d: d["figures"][0].update(position=[0, 1e9, 0]), r"figures\[0\]\.position: coordinates"),
        (lambda d: d["figures"][0].update(tint=[2, 0, 0]), r"figures\[0\]\.tint"),
        (lambda d: d.update(figures=[]), "at least one figure"),
        (lambda d: d.update(joints=[]), "'joints': not a field of a version 4 scene"),
        (lambda d: d["props"].append({"name": "x", "shape": "teapot"}), r"props\[0\]\.shape: expected one of box"),
        (lambda d: d["props"].append({"name": "x", "size": [0, 1, 1]}), r"props\[0\]\.size"),
        (lambda d: d["props"].append({"name": "x", "rotation": [0, 0, 0, 0]}), r"props\[0\]\.rotation"),
        (lambda d: d["props"].append({"name": "x", "scale": -1}), r"props\[0\]\.scale"),
        (lambda d: d["props"].append({"name": "x", "shape": "mesh"}), r"props\[0\]\.file"),
        (lambda d: d["props"].append({"name": "x", "parent": {"figure": "Cy", "joint": "hand_l"}}),
         r"props\[0\]\.parent\.figure: no figure 'Cy'"),
        (lambda d: d["props"].append({"name": "x", "parent": {"figure": "Ada", "joint": "paw"}}),
         r"props\[0\]\.parent\.joint: 'Ada' has no joint 'paw'"),
        (lambda d: d["contacts"].append({"figure": "Ada", "effector": "elbow_l", "on": BEN_HAND}),
         r"contacts\[0\]\.effector: 'elbow_l' is not an end effector"),
        (lambda d: d["contacts"].append({"figure": "Ada", "effector": "hand_l", "on": {"prop": "nothing"}}),
         r"contacts\[0\]\.on\.prop: no prop 'nothing'"),
        (lambda d: d["contacts"].append({"figure": "Ada", "effector": "hand_l", "on": {}}), "one of them"),
        (lambda d: d["contacts"].extend([{"figure": "Ada", "effector": "hand_l", "on": BEN_HAND}] * 2),
         r"contacts\[1\]: Ada\.hand_l already has a contact"),
        (lambda d: d["contacts"].append({"figure": "Ada", "effector": "hand_l", "on": {**BEN_HAND, "figure": "Ada"}}),
         "cannot be put on itself"),
        (lambda d: d.update(props=[{"name": str(i)} for i in range(65)]), "props: 65, more than the 64"),
    ],
)  # fmt: skip
def test_a_bad_stage_file_names_the_place(change, message) -> None:  # type: ignore[no-untyped-def]
    data = two_figures().to_dict()
    change(data)
    with pytest.raises(ValueError, match=message):
        parse_stage(json.dumps(data), "stage.json")


def test_stage_public_api() -> None:
    assert fabrik3d.Stage is Stage and fabrik3d.load_stage is load_stage and fabrik3d.save_stage is save_stage
    assert set(SHAPES) >= {"box", "block", "sphere", "cylinder", "capsule", "plane", "wall"}


names = st.text(st.characters(blacklist_categories=("Cc", "Cs")), min_size=1, max_size=20).filter(str.strip)
coords = st.floats(-50, 50, allow_nan=False)
unit = st.floats(-1, 1, allow_nan=False)


@st.composite
def stages(draw: st.DrawFn) -> Stage:
    fig_names = draw(st.lists(names, min_size=1, max_size=4, unique=True))
    figures = [
        Figure(n, HUMANOID, Placement(draw(st.tuples(coords, coords, coords)), draw(st.floats(-720, 720))),
               tint=draw(st.tuples(*[st.floats(0, 1)] * 3)), hidden=draw(st.booleans()), locked=draw(st.booleans()))
        for n in fig_names
    ]  # fmt: skip
    props = []
    for n in draw(st.lists(names, max_size=4, unique=True)):
        q = draw(st.tuples(unit, unit, unit, unit).filter(lambda q: sum(x * x for x in q) > 0.01))
        held = draw(st.booleans())
        parent = (
            Hold(draw(st.sampled_from(fig_names)), draw(st.sampled_from(HUMANOID.skeleton.names))) if held else None
        )
        shape = draw(st.sampled_from([s for s in SHAPES if s != "mesh"]))
        scale = draw(st.floats(0.01, 100))
        props.append(
            Prop(n, shape, transform=Transform(draw(st.tuples(coords, coords, coords)), q, scale), parent=parent)
        )
    contacts, used = [], set()
    for _ in range(draw(st.integers(0, 3))):
        a, eff = draw(st.sampled_from(fig_names)), draw(st.sampled_from(HUMANOID.skeleton.end_effectors))
        if (a, eff) in used:
            continue
        used.add((a, eff))
        if props and draw(st.booleans()):
            contacts.append(Contact(a, eff, on_prop=draw(st.sampled_from(props)).name, offset=(0.1, 0.0, -0.2)))
        else:
            b, joint = draw(st.sampled_from(fig_names)), draw(st.sampled_from(HUMANOID.skeleton.names))
            if (a, eff) != (b, joint):
                contacts.append(Contact(a, eff, b, joint))
    return Stage(figures, props, contacts)


@given(stages())
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_any_stage_round_trips_through_its_json(stage: Stage) -> None:
    text = json.dumps(stage.to_dict(), allow_nan=False)
    back = parse_stage(text)
    assert back.to_dict() == json.loads(text)
    for p, q in zip(stage.props, back.props):
        assert np.allclose(p.transform.apply([[0.1, 0.2, 0.3]]), q.transform.apply([[0.1, 0.2, 0.3]]))
