"""fabrik3d's trame web application (installed as the package ``fabrik3d_web``)."""
