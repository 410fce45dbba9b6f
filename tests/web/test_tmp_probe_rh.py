import math, time
import numpy as np
import pytest
from helpers import web as wh
import test_rotation_handles as t
from test_rotation_handles import view, pose, BODY, pixels_per_unit, drag_to

@pytest.fixture
def srvpage():
    with wh.WebServer() as srv, wh.browser() as b:
        yield srv, wh.open_page(b, srv.url)

def cam(page, name):
    n0 = wh.frame_count(page)
    wh.trigger(page, "reset_camera", [name])
    time.sleep(1.5)
    return wh.frame_count(page) - n0

def test_probe(srvpage):
    srv, page = srvpage
    logs = []
    page.on("console", lambda m: logs.append(("console", m.type, m.text[:300])))
    page.on("pageerror", lambda e: logs.append(("pageerror", str(e)[:500])))
    view(page, "top")
    start = pose(page)
    head = BODY.index("head")
    ppu = pixels_per_unit(page)
    box = wh.view_box(page)
    lx, ly = wh.trigger(page, "target_screen_position", ["head", "look"])
    hx, hy = wh.trigger(page, "joint_screen_position", ["head"])
    reach = (ly - hy) / ppu
    a = math.radians(40.0)
    end = (box["x"] + hx + reach * math.sin(a) * ppu, box["y"] + hy + reach * math.cos(a) * ppu)
    drag_to(page, (box["x"] + lx, box["y"] + ly), end)
    time.sleep(1)
    print("after drag", cam(page, "front"), cam(page, "top"))
    page.locator("#btn-free-look").click()
    wh.wait_until(page, "() => window.trame.state.get('look_target') === null")
    print("after free", cam(page, "front"), cam(page, "top"))
    wh.trigger(page, "undo")
    time.sleep(1)
    print("after undo", cam(page, "front"), cam(page, "top"))
    print(srv.output())
    for l in logs[-30:]: print(l)
    print(page.evaluate("({imgs: window.fabrikView && window.fabrikView.images, n: window.__fabrik.frames.length})"))
