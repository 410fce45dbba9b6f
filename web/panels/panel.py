"""The control panel (trame-vuetify 3), declared once; every control is bound to state or to one callback.

``toolbar(app)`` fills the app bar (live readouts and undo/redo), ``drawer(app)`` the side
panel (scene, solver, effectors, take and export). ``app`` is the ``fabrik3d_web.app.WebApp``
whose methods the controls call. Element ids (``id="..."``) are for tests and automation.
"""

from __future__ import annotations

from typing import Any

from trame.widgets import client, html
from trame.widgets import vtk as vtk_widgets
from trame.widgets import vuetify3 as v3

from ..view import view_js
from ..view.delivery import INTERACTIVE_QUALITY, STILL_RATIO

_FIELD = {"density": "compact", "hide_details": True, "variant": "outlined"}


def toolbar(app: Any) -> None:
    """Readouts (iterations, largest error, solve ms, fps), undo/redo and the error banner."""
    v3.VSpacer()
    with html.Div(classes="d-flex align-center text-body-2", style="gap: 6px"):
        _readout("readout-iterations", "mdi-repeat", "{{ iterations }} it")
        _readout("readout-error", "mdi-target", "{{ (max_error * 1000).toFixed(1) }} mm")
        _readout("readout-solve", "mdi-timer-outline", "{{ solve_ms.toFixed(2) }} ms")
        _readout("readout-fps", "mdi-speedometer", "{{ fps ? fps.toFixed(0) : '–' }} fps")
    v3.VDivider(vertical=True, classes="mx-2")
    app.state.update({"drag_key": "", "handle_screen": [], "alt_held": False, "rotate_held": False})
    v3.VIcon("mdi-axis-arrow-lock", size="small", title="Drag locks", classes="mr-1")
    with v3.VBtnToggle(v_model=("drag_lock", ""), density="compact", variant="text", id="drag-lock"):
        for lock, text, title in LOCK_BUTTONS:
            v3.VBtn(text, value=lock, id=f"btn-lock-{lock}", size="small", title=title, min_width=0)
    v3.VDivider(vertical=True, classes="mx-2")
    v3.VBtn(icon="mdi-undo", id="btn-undo", disabled=("!can_undo",), click=app.undo, title="Undo (Ctrl+Z)")
    v3.VBtn(icon="mdi-redo", id="btn-redo", disabled=("!can_redo",), click=app.redo, title="Redo (Ctrl+Shift+Z)")
    v3.VBtn(icon="mdi-backup-restore", id="btn-reset", click=app.reset_pose, title="Reset pose")
    v3.VBtn(icon="mdi-crop-free", id="btn-camera", click=app.reset_camera, title="Frame the skeleton (F)")
    for view in ("front", "side", "top"):
        click = f"trigger('reset_camera', ['{view}'])"
        v3.VBtn(view.title(), id=f"btn-view-{view}", size="small", variant="text", click=click, title=f"{view} view")
    v3.VBtn(icon="mdi-help-circle-outline", id="btn-help", click="show_help = true", title="Keyboard shortcuts (?)")
    help_dialog()
    client.ClientTriggers(mounted=KEYS_JS)
    client.ClientTriggers(mounted=view_js.VIEW_JS)
    client.ClientTriggers(mounted=view_js.MESSAGES_JS)
    client.ClientTriggers(mounted=view_js.IMAGES_JS)


# The keyboard shortcuts, the one list (the help dialog shows it, the page's key handler is built from
# it): (keys, what they do, when: a JS condition on the keydown event ``e`` (``key``: its key in lower
# case; ``mod``: Ctrl or Cmd held; ``plain``: neither nor Alt), what: a JS statement). Not while a text
# field has the focus (there the keys are the field's own); Enter in a field, or a click in the view, gives
# the keyboard back to the view. An axis key held down locks the drag to its axis until it is released
# (``drag_key``; see ``fabrik3d_web.drags.dragging``). (The page's scripts run as one line, Vue's way: no
# ``//`` comments, and the browser's globals through ``window``.)
SHORTCUTS = (
    ("Ctrl+Z (Cmd+Z)", "undo", "mod && !e.shiftKey && key === 'z'", "trigger('undo')"),
    ("Ctrl+Shift+Z or Ctrl+Y", "redo", "mod && ((e.shiftKey && key === 'z') || key === 'y')", "trigger('redo')"),
    ("F", "frame the skeleton (the perspective view)", "plain && key === 'f'", "trigger('reset_camera')"),
    (
        "Delete",
        "free the effector whose handle was grabbed last",
        "!mod && key === 'delete' && selected_effector",
        "trigger('free_effector', [selected_effector])",
    ),
    ("X, Y or Z held down", "drag along that axis only", "plain && ['x', 'y', 'z'].includes(key)", "drag_key = key"),
    (
        "G",
        "drag on the ground plane (the height kept), again to stop",
        "plain && key === 'g'",
        "drag_lock = drag_lock === 'ground' ? '' : 'ground'",
    ),
    (
        "Alt held down",
        "click a joint to choose it, drag around it to turn it",
        "key === 'alt' && !e.repeat",
        "alt_held = true",
    ),
    (
        "R held down",
        "drag a hand's, foot's, the head's or the pelvis's sphere around it to turn its target",
        "plain && key === 'r' && !e.repeat",
        "rotate_held = true",
    ),
    (
        "Esc",
        "hide the rotation rings; Copy takes the whole pose again",
        "key === 'escape'",
        "trigger('clear_selection')",
    ),
    ("K", "key the targets at the timeline's frame", "plain && key === 'k'", "trigger('set_key')"),
    (
        "Ctrl+C (Cmd+C)",
        "copy the pose (with a hand's or foot's handle grabbed last: that limb)",
        "mod && !e.shiftKey && !e.altKey && key === 'c'",
        "trigger('copy_pose')",
    ),
    (
        "Ctrl+V (Cmd+V)",
        "paste the copied pose at this frame (K keys it)",
        "mod && !e.shiftKey && key === 'v'",
        "trigger('paste_pose')",
    ),
    (
        "Ctrl+Shift+V",
        "paste the copied pose mirrored",
        "mod && e.shiftKey && key === 'v'",
        "trigger('paste_pose', [true])",
    ),
    ("Space", "play or pause the timeline", "plain && key === ' '", "trigger('toggle_timeline')"),
    (
        "Left / Right arrow",
        "the timeline's frame before / after",
        "plain && ['arrowleft', 'arrowright'].includes(key) && !(e.target.closest && e.target.closest('.v-slider'))",
        "trigger('step_frame', [key === 'arrowleft' ? -1 : 1])",
    ),
    ("?", "show or hide this list", "!mod && e.key === '?'", "show_help = !show_help"),
)
SHORTCUT_HELP = (
    "Keys: " + ", ".join(f"{keys} {what.split(' (')[0]}" for keys, what, _, _ in SHORTCUTS[:4]) + "; ? lists all."
)
_BRANCHES = "\n".join(f"  else if ({when}) {{ e.preventDefault(); {what}; }}" for _, _, when, what in SHORTCUTS)
KEYS_JS = f"""window.__overView = (e) => {{
  const v = window.document.getElementById('view3d'); return !!(v && v.contains(e.target));
}};
window.addEventListener('pointerdown', (e) => {{
  const f = window.document.activeElement;
  if (window.__overView(e) && f && ['INPUT', 'TEXTAREA'].includes(f.tagName)) f.blur();
}}, true);
window.addEventListener('keydown', (e) => {{
  const t = e.target && e.target.tagName;
  const typing = t === 'INPUT' || t === 'TEXTAREA' || (e.target && e.target.isContentEditable);
  if (typing) return;
  const mod = e.ctrlKey || e.metaKey, plain = !mod && !e.altKey, key = (e.key || '').toLowerCase();
  if (e.repeat && key === drag_key) return;
  if (false) {{}}
{_BRANCHES}
}});
window.addEventListener('keyup', (e) => {{
  const f = e.target;
  if (e.key === 'Enter' && f && f.tagName === 'INPUT') window.setTimeout(() => f.blur(), 0);
}}, true);
window.addEventListener('keyup', (e) => {{
  const key = (e.key || '').toLowerCase();
  if (key === drag_key) drag_key = '';
  if (key === 'alt') alt_held = false;
  if (key === 'r') rotate_held = false;
}});
window.addEventListener('blur', () => {{
  if (drag_key) drag_key = ''; if (alt_held) alt_held = false; if (rotate_held) rotate_held = false;
}})"""


# The drag's locks in the toolbar (value, label, tooltip); see ``fabrik3d_web.drags.dragging``.
LOCK_BUTTONS = (
    ("x", "X", "Drag along X only (or hold X down)"),
    ("y", "Y", "Drag along Y only (or hold Y down)"),
    ("z", "Z", "Drag along Z only (or hold Z down)"),
    ("ground", "Ground", "Drag on the ground plane, the height kept (G)"),
)


def help_dialog() -> None:
    """The keyboard shortcuts (``SHORTCUTS``), opened with the ? button or the ? key."""
    with v3.VDialog(v_model=("show_help", False), max_width=560):
        with v3.VCard(title="Keyboard shortcuts", id="help-dialog"):
            with v3.VCardText():
                with v3.VTable(density="compact"):
                    with html.Tbody():
                        for keys, what, _, _ in SHORTCUTS:
                            with html.Tr(classes="shortcut"):
                                with html.Td(style="white-space: nowrap"):
                                    html.Kbd(keys)
                                html.Td(what)
                html.Div(
                    "Mouse: drag a sphere to move its target; drag empty space to orbit, right-drag or the wheel "
                    "to zoom (toward the cursor), middle-drag or Shift+drag to pan. Hover a sphere for its name.",
                    classes="text-caption mt-2",
                )
            with v3.VCardActions():
                v3.VSpacer()
                v3.VBtn("Close", id="btn-help-close", click="show_help = false")


def view_3d(app: Any) -> Any:
    """The 3D view (trame-vtk's remote view of ``app.scene``) and the label of the handle under the mouse."""
    html.Div(
        id="handle-tip",
        classes="text-body-2 elevation-2 px-2 rounded",
        style="position: absolute; display: none; pointer-events: none; z-index: 5; background: #fffe",
    )
    return vtk_widgets.VtkRemoteView(
        app.scene.render_window,
        ref="view",
        id="view3d",
        # (what moves sends its own small frames, ImageDelivery.push_now; trame-vtk's stream, held
        # meanwhile, keeps the window at the view's size, onto whose pixels the mouse's events map)
        interactive_ratio=STILL_RATIO,
        still_ratio=STILL_RATIO,
        interactive_quality=INTERACTIVE_QUALITY,
        still_quality=92,
        interactor_events=("['StartMouseMove']",),
        StartMouseMove="window.fabrikTuneView && window.fabrikTuneView($event)",
    )


def _readout(element_id: str, icon: str, text: str) -> None:
    with v3.VChip(id=element_id, size="small", variant="tonal", label=True):
        v3.VIcon(icon, start=True, size="small")
        html.Span(text)


def error_banner(app: Any) -> None:
    """A dismissable banner over the 3D view showing ``error_message``."""
    v3.VAlert(
        text=("error_message",),
        v_show="error_message",
        id="error-message",
        type="error",
        density="compact",
        closable=True,
        click_close="error_message = ''",
        style="position: absolute; top: 8px; left: 8px; right: 8px; z-index: 10;",
    )
