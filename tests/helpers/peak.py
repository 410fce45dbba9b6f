"""A process's own peak resident memory, for scripts the tests run in a child process.

``PEAK_MB`` is Python source defining ``peak_mb()``: the peak resident set in MB of the process that runs
it, from Linux's ``VmHWM`` (which starts afresh at exec). ``getrusage``'s ``ru_maxrss`` is kept across
exec (getrusage(2)), so a child spawned by a large test process (an xdist worker that compiled numba's
kernels, say) would report its parent's size; it is the fallback where ``/proc`` is missing.
"""

PEAK_MB = """
def peak_mb():
    import os, resource
    if os.path.exists("/proc/self/status"):
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) // 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
"""
