"""The panels: the page's toolbar, side panel, tabs and timeline bar (trame and Vuetify layout) and the
triggers and callbacks behind their controls: components that get what they read and call explicitly
(``figures_panel.FiguresPanel``, ``posing_panel.PosingPanel``, ``turning_panel.TurningPanel``,
``character_panel.CharacterPanel``, ``body_panel.BodyPanel``, ``poses_panel.PosesPanel``,
``timeline_panel.TimelinePanel``, ``picture_panel.PicturePanel``, ``hands_panel.HandsPanel``,
``mesh_props.MeshUploads``), each an attribute of ``fabrik3d_web.app.WebApp``. They may import trame and
every layer below (drags, view, document) and the shared modules, never the app itself, which composes
them (tests/test_architecture.py)."""
