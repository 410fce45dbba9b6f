"""The Scene tab's figures, props and contacts (issue 52): a component on the document
(``fabrik3d_web.document.document``), with its own triggers and layout, that gets what it reads and calls explicitly.

The user adds a figure (a preset, or a copy of the selected one), picks one in the list (the panels and the
handles then act on it; the others are drawn plainly, ``fabrik3d_web.view.stage_view``), renames, places (typed
x, y, z in metres and facing in degrees), hides, locks or deletes it; adds a prop of a built-in shape, places
it, lets a joint of the selected figure hold it, lets go of it, deletes it (or adds a prop of an uploaded mesh:
``fabrik3d_web.panels.mesh_props``); puts an end effector of the selected figure on another figure's joint or on a
prop, and removes contacts. Each is one undo step.

State (server-owned, ``security.SERVER_OWNED``): ``figures`` (``[{name, colour, hidden, locked}]``),
``figure_selected``, ``figure_place`` (``[x, y, z, facing]`` of the selected one), ``stage_props``
(``[{name, shape, held, missing}]``: ``missing``, a mesh prop whose file is not uploaded), ``stage_contacts``
(``[{index, label}]``), ``contact_anchors`` (``[{title, value}]``: other figures and props), ``contact_joints``
(the joints of the anchor chosen), ``prop_place`` (the picked prop's ``[x, y, z, turn x, turn y, turn z,
scale]``). The page writes the fields' values (``add_preset``, ``prop_shape``, ``prop_picked``, ``hold_joint``,
``contact_effector``, ``contact_anchor``, ``contact_joint``, ``mesh_upload``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from trame.decorators import TrameApp, change
from trame.widgets import html
from trame.widgets import vuetify3 as v3

from fabrik3d import checks
from fabrik3d import rotations as rot
from fabrik3d.display import hex_colour
from fabrik3d.model.props import SHAPES

from ..document import stage_commands as commands
from ..document.document import Document
from ..drags.component import Component
from ..security import page_trigger
from ..view.stage_view import StageView, carry_camera
from . import mesh_props

_FIELD = {"density": "compact", "hide_details": True, "variant": "outlined"}


@TrameApp()
class FiguresPanel(Component):
    """The figures, props and contacts of ``document`` (module docstring).

    Args:
        server: the trame server (its state and triggers).
        document: the scene document.
        view: draws the other figures and the props.
        camera: the view's camera, carried when the view's frame changes.
        show_skeleton: puts the selected figure's skeleton in the view (after a switch).
        publish: publishes the selected figure's state and renders.
        report: shows a message in the page's error banner.
        own: sets server-owned state.
    """

    def __init__(self, server: Any, document: Document, view: StageView, camera: Callable[[], Any],
                 show_skeleton: Callable[[], None], publish: Callable[[], None], report: Callable[[str], None],
                 own: Callable[[dict[str, Any]], None]) -> None:  # fmt: skip
        self.server, self.document, self.view, self.camera = server, document, view, camera
        self.show_skeleton, self._publish, self.report, self._own = show_skeleton, publish, report, own
        self._settled: Any = None  # (the selected figure's pose whose contacts were kept last)
        self.handles: Any = None  # (the picked prop's handles in the view: ``fabrik3d_web.drags.prop_handles``)
        self.meshes = mesh_props.MeshUploads(server, document, self._run, report)  # (a prop of an uploaded mesh)
        self._shown, self._placement = document.controller, document.slot.placement  # (what the view shows)
        self.server.state.update({"add_preset": "humanoid", "prop_shape": "box", "prop_picked": None,
                                  "hold_joint": "hand_r"})  # fmt: skip
        self.server.state.update({"contact_effector": None, "contact_anchor": None, "contact_joint": None})

    # -- what the view shows ---------------------------------------------------------------------------
    def draw(self) -> None:
        """Keep the contacts of the selected figure's latest pose (once per pose), draw the rest of the stage and
        the picked prop's handles."""
        d = self.document
        if d.controller.result is not self._settled:
            d.settle([d.selected])
            self._settled = d.controller.result
        self.view.show(d)
        if self.handles is not None:
            self.handles.follow()

    def publish(self) -> None:
        """The document's state for the panel."""
        d = self.document
        figures = [
            {"name": s.name, "colour": hex_colour(s.tint), "hidden": s.hidden, "locked": s.locked} for s in d.slots
        ]
        p = d.slot.placement
        props = [{"name": x.name, "shape": x.shape, "held": "" if x.parent is None else
                  f"{x.parent.figure} · {x.parent.joint}", "missing": mesh_props.missing(d, x)}
                 for x in d.props]  # fmt: skip
        contacts = [{"index": k, "label": c.label} for k, c in enumerate(d.contacts)]
        anchors = [{"title": s.name, "value": f"figure:{s.name}"} for s in d.slots if s.name != d.selected]
        anchors += [{"title": f"prop {x.name}", "value": f"prop:{x.name}"} for x in d.props]
        self._own({"figures": figures, "figure_selected": d.selected, "stage_props": props,
                   "stage_contacts": contacts, "contact_anchors": anchors,
                   "figure_place": [*(round(float(v), 4) for v in p.position), round(p.facing, 2)]})  # fmt: skip
        self._own({"contact_joints": self._anchor_joints(self.state.contact_anchor)})
        self._own({"prop_place": self._prop_place(self.state.prop_picked)})

    def _prop_place(self, name: Any) -> list[float]:
        """The picked prop's position (m), turn (XYZ degrees) and scale, as the fields show them."""
        prop = next((p for p in self.document.props if p.name == name), None)
        if prop is None:
            return []
        t = prop.transform
        turn = rot.euler_xyz(tuple(float(x) for x in t.rotation))  # type: ignore[arg-type]
        return [round(float(v), 4) for v in (*t.position, *turn, t.scale)]

    def _anchor_joints(self, anchor: Any) -> list[str]:
        if isinstance(anchor, str) and anchor.startswith("figure:"):
            name = anchor.removeprefix("figure:")
            if any(s.name == name for s in self.document.slots):
                return list(self.document.find(name).controller.scene.skeleton.names)
        return []

    def refresh(self) -> None:
        """After a change of the document (a command, an undo): the selected figure shown if it is another one,
        the camera carried if the view's frame moved; the state published."""
        d = self.document
        if d.controller is not self._shown:
            self._shown, self._settled = d.controller, None
            camera = self.camera()
            kept = [(set_, get()) for set_, get in _camera_fields(camera)]
            self.show_skeleton()  # (which frames the new skeleton: the camera is put back as it was)
            for set_, value in kept:
                set_(value)
        if d.slot.placement is not self._placement:
            carry_camera(self.camera(), self._placement, d.slot.placement)
            self._placement = d.slot.placement
        self._publish()

    def click(self, x: float, y: float, project: Callable[[Any], Any]) -> bool:
        """The user clicked render pixel ``(x, y)`` of the view: on another figure, it is selected (True)."""
        name = self.view.pick(x, y, project)
        if name is None:
            return False
        self._run(self.document.select_figure, name)
        return True

    def _run(self, action: Callable[..., Any], *args: Any) -> None:
        try:
            action(*args)
        finally:
            self.refresh()

    # -- readouts for automation and tests -------------------------------------------------------------
    @page_trigger("stage_point")
    def stage_point(self, figure: Any, joint: Any) -> list[float]:
        """``[x, y, z]``: where joint ``joint`` of figure ``figure`` is in the stage's world (metres)."""
        slot = self.document.find(figure)
        names = slot.controller.scene.skeleton.names
        if joint not in names:
            raise ValueError(f"joint: {slot.name!r} has no joint {checks.quoted(joint)}")
        return slot.placement.to_world(slot.controller.result.positions[names.index(joint)]).tolist()

    @page_trigger("prop_frame")
    def prop_frame(self, name: Any) -> dict[str, list[float]]:
        """A prop's frame in the stage's world: ``{position: [x, y, z], rotation: [x, y, z, w]}``."""
        t = self.document.prop_world(self.document.prop(name))
        return {"position": t.position.tolist(), "rotation": t.rotation.tolist()}

    # -- files -----------------------------------------------------------------------------------------
    @page_trigger("download_scene")
    def download_scene(self) -> Any:
        """The user clicked download scene: the scene file (every figure's current targets and keys)."""
        return self.server.protocol.addAttachment(self.document.scene_json().encode())

    @page_trigger("export_pose_glb")
    def export_pose_glb(self) -> Any:
        """The user clicked export pose: every figure's pose and every prop as a binary glTF (with the
        mannequin if chosen)."""
        return self.server.protocol.addAttachment(self.document.pose_glb(self.state.export_mannequin is True))

    # -- what the user did -----------------------------------------------------------------------------
    @page_trigger("add_figure")
    def add_figure(self, preset: Any = "humanoid") -> None:
        """The user added a figure of a preset beside the selected one."""
        self._run(self.document.add_figure, preset)

    @page_trigger("duplicate_figure")
    def duplicate_figure(self) -> None:
        """The user added a copy of the selected figure, pose and keys and all."""
        self._run(self.document.add_figure, "humanoid", True)

    @page_trigger("select_figure")
    def select_figure(self, name: Any) -> None:
        """The user picked a figure in the list."""
        self._run(self.document.select_figure, name)

    @page_trigger("rename_figure")
    def rename_figure(self, name: Any) -> None:
        """The user typed a new name for the selected figure."""
        self._run(self.document.rename_figure, self.document.selected, name)

    @page_trigger("place_figure")
    def place_figure(self, x: Any, y: Any, z: Any, facing: Any) -> None:
        """The user typed where the selected figure stands and which way it faces."""
        point = [_number(v, f"position.{a}") for v, a in ((x, "x"), (y, "y"), (z, "z"))]
        self._run(self.document.place_figure, self.document.selected, point, _number(facing, "facing"))

    @page_trigger("flag_figure")
    def flag_figure(self, name: Any, flag: Any, on: Any) -> None:
        """The user hid or showed, locked or unlocked a figure."""
        if flag not in ("hidden", "locked"):
            raise ValueError(f"flag: expected hidden or locked, got {checks.quoted(flag)}")
        self._run(self.document.set_figure_flags, name, *((on, None) if flag == "hidden" else (None, on)))

    @page_trigger("delete_figure")
    def delete_figure(self) -> None:
        """The user deleted the selected figure."""
        self._run(self.document.delete_figure, self.document.selected)

    @page_trigger("add_prop")
    def add_prop(self, shape: Any) -> None:
        """The user added a prop of a built-in shape in front of the selected figure."""
        self._run(lambda: self.state.update({"prop_picked": commands.add_prop(self.document, shape)}))

    @page_trigger("place_prop")
    def place_prop(self, name: Any, x: Any, y: Any, z: Any, turn_x: Any, turn_y: Any, turn_z: Any,
                   scale: Any) -> None:  # fmt: skip
        """The user typed a prop's position (m), turn (XYZ degrees) and scale."""
        point = [_number(v, f"position.{a}") for v, a in ((x, "x"), (y, "y"), (z, "z"))]
        turn = [_number(v, f"turn.{a}") for v, a in ((turn_x, "x"), (turn_y, "y"), (turn_z, "z"))]
        self._run(commands.place_prop, self.document, name, point, turn, _number(scale, "scale"))

    @page_trigger("hold_prop")
    def hold_prop(self, name: Any, joint: Any) -> None:
        """The user let a joint of the selected figure hold the prop (where it is now)."""
        self._run(commands.attach_prop, self.document, name, self.document.selected, joint)

    @page_trigger("let_go_prop")
    def let_go_prop(self, name: Any) -> None:
        """The user let go of the prop where it is."""
        self._run(commands.detach_prop, self.document, name)

    @page_trigger("delete_prop")
    def delete_prop(self, name: Any) -> None:
        """The user deleted a prop (and the contacts on it)."""
        self._run(commands.delete_prop, self.document, name)

    @page_trigger("add_contact")
    def add_contact(self, effector: Any, anchor: Any, joint: Any = None) -> None:
        """The user put an end effector of the selected figure on another figure's joint or on a prop."""
        if not isinstance(anchor, str) or not anchor.startswith(("figure:", "prop:")):
            raise ValueError(f"on: expected a figure or a prop, got {checks.quoted(anchor)}")
        kind, _, name = anchor.partition(":")
        on = (name, joint, None) if kind == "figure" else (None, None, name)
        self._run(commands.add_contact, self.document, self.document.selected, effector, *on)

    @page_trigger("remove_contact")
    def remove_contact(self, index: Any) -> None:
        """The user removed a contact."""
        self._run(commands.remove_contact, self.document, index)

    @change("prop_picked")
    def pick_prop(self, prop_picked: Any, **_: Any) -> None:
        """The user picked a prop: its place is shown in the fields."""
        self._own({"prop_place": self._prop_place(prop_picked)})

    @change("contact_anchor")
    def choose_anchor(self, contact_anchor: Any, **_: Any) -> None:
        """The user chose what the effector goes on: the joints of that figure are offered."""
        joints = self._anchor_joints(contact_anchor)
        self._own({"contact_joints": joints})
        if joints and self.state.contact_joint not in joints:
            self.state.contact_joint = "hand_r" if "hand_r" in joints else joints[0]


def _camera_fields(camera: Any) -> list[tuple[Callable[[Any], Any], Callable[[], Any]]]:
    """The camera's setters and getters of what framing changes."""
    names = ("Position", "FocalPoint", "ViewUp", "ParallelScale", "ViewAngle", "ParallelProjection")
    return [(lambda v, n=n: getattr(camera, f"Set{n}")(v), getattr(camera, f"Get{n}")) for n in names]


def _number(value: Any, where: str) -> float:
    """A number typed in a field (text or number)."""
    try:
        out = float(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{where}: expected a number, got {checks.quoted(value)}") from None
    return checks.number(out, where)


def _typed(values: str, k: int) -> str:
    """The JS array of state ``values`` as text, its item ``k`` the one typed (a field's change: Enter, or
    the focus leaving it)."""
    return f"{values}.map((v, i) => i === {k} ? $event.target.value : String(v))"


def section(app: Any) -> None:
    """The figures list and its buttons, the selected figure's place, the props and the contacts."""
    with html.Div(id="figures", classes="d-flex flex-column", style="gap: 6px"):
        with html.Div(classes="d-flex flex-wrap", style="gap: 4px", id="figure-list"):
            with v3.VChip(v_for="f in figures", key="f.name", label=True, size="small",
                          variant=("f.name === figure_selected ? 'flat' : 'outlined'",),
                          click="trigger('select_figure', [f.name])", raw_attrs=[':data-figure="f.name"'],
                          classes="figure-chip"):  # fmt: skip
                html.Span(style=("`display:inline-block;width:10px;height:10px;border-radius:5px;"
                                 "margin-right:6px;background:${f.colour}`",))  # fmt: skip
                html.Span("{{ f.name }}{{ f.hidden ? ' (hidden)' : '' }}{{ f.locked ? ' (locked)' : '' }}")
        with html.Div(classes="d-flex align-center", style="gap: 6px"):
            v3.VSelect(v_model=("add_preset",), items=("presets",), id="add-preset", label="Preset", **_FIELD)
            v3.VBtn("Add", id="btn-add-figure", size="small", variant="tonal", prepend_icon="mdi-account-plus",
                    click="trigger('add_figure', [add_preset])")  # fmt: skip
            v3.VBtn("Copy", id="btn-duplicate-figure", size="small", variant="tonal",
                    click="trigger('duplicate_figure')")  # fmt: skip
            v3.VBtn(icon="mdi-delete-outline", id="btn-delete-figure", size="small", variant="text",
                    disabled=("figures.length < 2",), click="trigger('delete_figure')",
                    title="Delete the figure")  # fmt: skip
        with html.Div(classes="d-flex align-center", style="gap: 4px", id="figure-place"):
            v3.VTextField(label="Name", model_value=("figure_selected",), id="figure-name", style="flex: 2 1 0",
                          change="trigger('rename_figure', [$event.target.value])", **_FIELD)  # fmt: skip
            for k, axis in enumerate(("x", "y", "z", "facing")):
                v3.VTextField(label=axis, model_value=(f"figure_place[{k}]",), id=f"figure-{axis}",
                              style="flex: 1 1 0", **_FIELD,
                              change=f"trigger('place_figure', {_typed('figure_place', k)})")  # fmt: skip
        with html.Div(classes="d-flex", style="gap: 4px"):
            for flag, label in (("hidden", "Hide"), ("locked", "Lock")):
                flip = f"trigger('flag_figure', [figure_selected, '{flag}', $event])"
                v3.VCheckbox(label=label, id=f"figure-{flag}", density="compact", hide_details=True,
                             model_value=(f"(figures.find((f) => f.name === figure_selected) || {{}}).{flag}",),
                             update_modelValue=flip)  # fmt: skip
    html.Div("Props", classes="text-caption text-medium-emphasis mb-n1")
    with html.Div(id="props", classes="d-flex flex-column", style="gap: 6px"):
        with html.Div(classes="d-flex align-center", style="gap: 6px"):
            shapes = [s for s in SHAPES if s != "mesh"]
            v3.VSelect(v_model=("prop_shape",), items=("shapes", shapes), id="prop-shape", label="Shape", **_FIELD)
            v3.VBtn("Add prop", id="btn-add-prop", size="small", variant="tonal",
                    click="trigger('add_prop', [prop_shape])")  # fmt: skip
        mesh_props.section(**_FIELD)
        v3.VSelect(v_model=("prop_picked",), items=("stage_props.map((p) => p.name)",), id="prop-picked",
                   label="Prop", v_if="stage_props.length", clearable=True, **_FIELD)  # fmt: skip
        with html.Div(v_if="prop_picked && prop_place.length", classes="d-flex", style="gap: 4px", id="prop-place"):
            for k, label in enumerate(("x", "y", "z", "turn x", "turn y", "turn z", "scale")):
                v3.VTextField(label=label, model_value=(f"prop_place[{k}]",), id=f"prop-{label.replace(' ', '-')}",
                              style="flex: 1 1 0", **_FIELD,
                              change=f"trigger('place_prop', [prop_picked, ...{_typed('prop_place', k)}])")  # fmt: skip
        with html.Div(v_if="prop_picked", classes="d-flex flex-wrap align-center", style="gap: 4px"):
            v3.VSelect(v_model=("hold_joint",), items=("joint_names",), id="hold-joint", label="Joint",
                       style="flex: 1 1 0", **_FIELD)  # fmt: skip
            v3.VBtn("Hold", id="btn-hold-prop", size="small", variant="tonal",
                    click="trigger('hold_prop', [prop_picked, hold_joint])")  # fmt: skip
            v3.VBtn("Let go", id="btn-let-go-prop", size="small", variant="tonal",
                    click="trigger('let_go_prop', [prop_picked])")  # fmt: skip
            v3.VBtn(icon="mdi-delete-outline", id="btn-delete-prop", size="small", variant="text",
                    click="trigger('delete_prop', [prop_picked])", title="Delete the prop")  # fmt: skip
        html.Div("{{ (stage_props.find((p) => p.name === prop_picked) || {}).held }}", classes="text-caption",
                 id="prop-held")  # fmt: skip
    html.Div("Contacts", classes="text-caption text-medium-emphasis mb-n1")
    with html.Div(id="contacts", classes="d-flex flex-column", style="gap: 6px"):
        with html.Div(classes="d-flex align-center", style="gap: 4px"):
            v3.VSelect(v_model=("contact_effector",), items=("effectors.map((e) => e.name)",), id="contact-effector",
                       label="Put", **_FIELD)  # fmt: skip
            v3.VSelect(v_model=("contact_anchor",), items=("contact_anchors",), id="contact-anchor", label="on",
                       **_FIELD)  # fmt: skip
            v3.VSelect(v_model=("contact_joint",), items=("contact_joints",), id="contact-joint", label="joint",
                       v_if="contact_joints.length", **_FIELD)  # fmt: skip
            v3.VBtn(icon="mdi-link-variant-plus", id="btn-add-contact", size="small", variant="tonal",
                    click="trigger('add_contact', [contact_effector, contact_anchor, contact_joint])")  # fmt: skip
        with html.Div(v_for="c in stage_contacts", key="c.index", classes="d-flex align-center contact-row"):
            html.Span("{{ c.label }}", classes="text-body-2", style="flex: 1 1 auto")
            v3.VBtn(icon="mdi-link-variant-off", size="x-small", variant="text", classes="btn-remove-contact",
                    click="trigger('remove_contact', [c.index])", title="Remove the contact")  # fmt: skip
