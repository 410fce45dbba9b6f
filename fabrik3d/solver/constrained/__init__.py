"""The constrained solve (the paper's section 4): its plan, its loop (``solve``), the reaching
passes, the damped least-squares steps and the pole turns."""
