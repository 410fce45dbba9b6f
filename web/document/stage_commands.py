"""The document's commands on props and contacts (issue 52): functions on a ``fabrik3d_web.document.document.Document``,
each checking its input first (``ValueError`` naming the problem, nothing changed) and then one undo step.

A prop is added standing on the floor in front of the selected figure; placed by a position (metres), a turn
(XYZ Euler degrees) and a scale, in the world or relative to the joint that holds it; held by a joint where it
is (the grip is the offset at that time) and let go where it is. A contact puts an end effector on another
figure's joint or on a prop's surface (the point nearest the effector now), and the linked figures settle.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from fabrik3d import checks
from fabrik3d import rotations as rot
from fabrik3d.io.prop_file import prop_surface
from fabrik3d.io.stage import MAX_CONTACTS, MAX_PROPS, Figure, Stage
from fabrik3d.model.contacts import Contact
from fabrik3d.model.placement import Transform, frame_transform
from fabrik3d.model.props import SHAPES, Hold, nearest_on_surface, standing
from fabrik3d.solver import together

from .document import Document


def add_prop(doc: Document, shape: Any) -> str:
    """Add a prop of ``shape`` standing on the floor in front of the selected figure; returns its name."""
    if shape not in SHAPES or shape == "mesh":
        raise ValueError(f"shape: expected one of {', '.join(s for s in SHAPES if s != 'mesh')}, got {shape!r}")
    return add_standing(doc, shape, shape)


def add_standing(doc: Document, base: str, shape: str, **kw: Any) -> str:
    """Add a prop of ``shape`` (``kw``: the ``Prop``'s ``size``, ``file``) named ``base`` (or ``base 2``, ...)
    standing on the floor in front of the selected figure; returns its name."""
    if len(doc.props) >= MAX_PROPS:
        raise ValueError(f"props: a scene holds at most {MAX_PROPS}")
    c = doc.controller
    ahead = doc.slot.placement.to_world(np.array([0.0, 0.0, 0.6]))
    floor = c.scene.floor or 0.0
    prop = standing(doc.free_name(base, doc.props), shape, ahead[0], ahead[2], floor + doc.slot.placement.position[1],
                    **kw)  # fmt: skip
    doc.step()
    doc.props.append(prop)
    return prop.name


def place_prop(doc: Document, name: Any, position: Any, turn_deg: Any = (0.0, 0.0, 0.0), scale: Any = 1.0) -> None:
    """Set a prop's position (metres), turn (XYZ Euler degrees) and scale: in the world, or relative to the
    joint that holds it."""
    prop = doc.prop(name)
    turn = checks.vec(turn_deg, "turn")
    transform = Transform(position, np.array(rot.from_euler_xyz(turn)), scale)
    doc.step()
    doc.replace_prop(prop, dataclasses.replace(prop, transform=transform))


def attach_prop(doc: Document, name: Any, figure: Any, joint: Any) -> None:
    """Let joint ``joint`` of ``figure`` hold the prop where it is now (the grip is the offset at this time); a
    hand that holds it takes the shape "grip"."""
    prop, slot = doc.prop(name), doc.find(figure)
    names = slot.controller.scene.skeleton.names
    if joint not in names:
        raise ValueError(f"joint: {slot.name!r} has no joint {str(joint)[:64]!r}")
    j = names.index(joint)
    pose = slot.controller.result
    hold = slot.placement.transform.then(frame_transform(pose.positions[j], pose.rotations[j]))
    grip = hold.inverse().then(doc.prop_world(prop))
    doc.step()
    doc.replace_prop(prop, dataclasses.replace(prop, transform=grip, parent=Hold(slot.name, joint)))
    c = slot.controller  # a hand closes round what it holds: the hand shape "grip" (a step of its own)
    roles = {} if c.character is None else {bone: role for role, bone in c.character.effectors.items()}
    role = roles.get(joint, joint)
    if role in ("hand_l", "hand_r") and role[-1] in c.hand_sides():
        c.shape_hand(role[-1], "grip")


def detach_prop(doc: Document, name: Any) -> None:
    """The prop is let go where it is."""
    prop = doc.prop(name)
    if prop.parent is None:
        raise ValueError(f"prop: {prop.name!r} is not held")
    doc.step()
    doc.replace_prop(prop, dataclasses.replace(prop, transform=doc.prop_world(prop), parent=None))


def delete_prop(doc: Document, name: Any) -> None:
    prop = doc.prop(name)
    doc.step()
    doc.props.remove(prop)
    doc.contacts = [c for c in doc.contacts if c.on_prop != prop.name]


def add_contact(doc: Document, figure: Any, effector: Any, on_figure: Any = None, joint: Any = None,
                on_prop: Any = None) -> None:  # fmt: skip
    """Put ``figure``'s end effector ``effector`` on ``on_figure``'s joint ``joint`` (its point there now: the
    offset is zero for a joint) or on ``on_prop``'s point nearest the effector now; then settle."""
    offset = np.zeros(3)
    if on_prop is not None:
        prop = doc.prop(on_prop)
        slot = doc.find(figure)
        sk = slot.controller.scene.skeleton
        if effector in sk.end_effectors:
            hand = slot.placement.to_world(slot.controller.result.positions[sk.index(effector)])
            vertices, _, triangles = prop_surface(prop, doc.mesh_files)  # (its own surface, a mesh's too)
            offset = nearest_on_surface(doc.prop_world(prop).inverse().apply(hand), vertices, triangles)
    contact = Contact(figure, effector, on_figure, joint, on_prop, offset)
    if len(doc.contacts) >= MAX_CONTACTS:
        raise ValueError(f"contacts: a scene holds at most {MAX_CONTACTS}")
    # (the stage's checks: the names, an end effector, one contact an effector)
    Stage([Figure(s.name, s.controller.scene, s.placement) for s in doc.slots], list(doc.props),
          [*doc.contacts, contact])  # fmt: skip
    doc.step()
    doc.contacts.append(contact)
    _clasp(doc, contact)
    doc.settle([contact.figure])


def _clasp(doc: Document, contact: Contact) -> None:
    """Two free hands of figures facing each other, just joined, meet at a handshake's height
    (``together.clasp_point``), not where they hung; hands the user placed meet halfway where they are."""
    if contact.on_figure is None:
        return
    ends = [(doc.find(contact.figure), contact.effector), (doc.find(contact.on_figure), contact.joint)]
    if any(name not in s.controller.scene.skeleton.end_effectors or name in s.controller.targets for s, name in ends):
        return
    point = together.clasp_point(
        *((s.controller.scene.skeleton, s.controller.result.positions, s.placement, name) for s, name in ends)
    )
    if point is None:
        return
    for s, name in ends:
        c = s.controller
        c.result = c._solve({**c.targets, name: s.placement.to_local(point)}, c.root_target, c.poles,
                            c.result.positions, c.result.rotations)  # fmt: skip


def remove_contact(doc: Document, index: Any) -> None:
    if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(doc.contacts):
        raise ValueError(f"contact: expected an index 0..{len(doc.contacts) - 1}, got {str(index)[:20]!r}")
    doc.step()
    del doc.contacts[index]
