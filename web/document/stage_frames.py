"""Every figure on the timeline's frame (issue 52): going to a frame, playing and scrubbing show each figure
at that frame, not the selected one alone, and the background bake bakes every figure's keys.

The selected figure's controller decides the frame (its range, its checks: ``Controller.go_to_frame``); each
other figure goes to the same frame within its own range (each figure's keys and range are its own, as in the
scene file), quickly: a frame not baked yet shows its keys' poses' curve at once (``Timeline.preview_of``) and
its baked pose once the background bake reaches it (``bake_ahead``). Contacts between figures are kept on the
frame shown (``Document.settle``); the animation file bakes them on every frame (``fabrik3d.io.stage_bake``).
"""

from __future__ import annotations

from typing import Any

from .document import Document


def go_to_frame(doc: Document, frame: Any, quick: bool = False) -> None:
    """Show frame ``frame`` on every figure (``ValueError`` outside the selected figure's range: nothing
    changes). ``quick``: the selected figure's frame may be a preview too (a frame the user went to)."""
    doc.controller.go_to_frame(frame, quick)
    f, moved = doc.controller.frame, []
    for slot in doc.slots:
        c = slot.controller
        if slot is not doc.slot and c.frame != f:
            c.go_to_frame(min(max(f, c.animation.start), c.animation.last), True)
            if c.animation.keys:
                moved.append(slot.name)
    doc.settle(moved)


def bake_ahead(doc: Document, frames: int) -> tuple[bool, list[str]]:
    """Bake up to ``frames`` more frames of one figure's range (``Timeline.bake_ahead``: the selected figure's
    first, then the others' in order, so that a step of the background bake costs one figure's frames), and
    show baked the frames shown as previews that the bake reached (``Timeline.refine_preview``). Returns
    whether frames remain to bake, and the names of the figures whose pose shown changed (baked)."""
    slots = [doc.slot, *(s for s in doc.slots if s is not doc.slot)]
    baking = next((s for s in slots if s.controller.unbaked), None)
    if baking is not None:
        baking.controller.bake_ahead(frames)
    refined = [s.name for s in slots if s.controller.previewing is not None and s.controller.refine_preview()]
    doc.settle([name for name in refined if name != doc.selected])
    return any(s.controller.unbaked for s in slots), refined
