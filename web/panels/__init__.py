"""The panels: the page's toolbar, side panel, tabs and timeline bar (trame and Vuetify layout) and the
triggers and callbacks behind their controls: components that get what they read and call explicitly
(``figures_panel.FiguresPanel``, ``posing_panel.PosingPanel``, ``turning_panel.TurningPanel``,
``character_panel.CharacterPanel``, ``mesh_props.MeshUploads``), the others still parts of
``fabrik3d_web.app.WebApp``. They may import trame and every layer below (drags, view, document) and the
shared modules, never the app itself, which composes them (tests/test_architecture.py)."""
