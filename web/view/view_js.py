"""The page's side of the 3D view: how its mouse moves reach the server, how its images are shown, and the
handles' names on hover.

trame-vtk's remote view sends the mouse to the server through vtk.js's ``vtkInteractorStyleRemoteMouse``.
Two of its habits hurt a drag; ``VIEW_JS`` works around them at each "start of moving" of the
mouse (``window.fabrikTuneView``, called by the view's ``StartMouseMove`` event, whose
``pokedRenderer`` is the remote view's canvas, which knows the interactor and its style):

* it sends at most one move every 33.3 ms (``throttleDelay``): at most 30 moves a second reach the
  server, so a drag could not exceed 30 frames a second. It becomes ``MOVE_INTERVAL_MS``;
* vtk.js calls a move that follows no other within 200 ms a "start" of moving, which the style
  does not send: after a pause in a drag, the next move was lost (the handle jumped only when the
  mouse was released). While a button is down, a start of moving is now sent as the move it is
  (the style's own ``RemoteMouseEvent``, the message it sends for a move; vtk.js objects are
  frozen, so its handlers cannot be replaced) with the buttons of the press that began in the view.

The server's messages: trame's client (wslink) takes them from its WebSocket as Blobs and reads each in
two parts (a header and the body), each read an asynchronous round trip through the browser's process:
for a drag's every image and state change, some 10 ms of the browser's time per frame.
``MESSAGES_JS`` switches the socket to ``ArrayBuffer`` data, handed to wslink wrapped in an object with
the two Blob methods it uses (``slice``, ``arrayBuffer``), read at once. The socket is found at its
first ``send`` after the page is mounted (the client's objects are frozen and do not expose it); a
socket opened later (after a reconnection) keeps wslink's own way.

The images: trame-vtk's view makes each JPEG it receives a blob URL, loads it into an ``Image`` and
then into the view's ``<img>`` (a second load), which the browser scales up to the view in raster
tiles on every frame (a drag's image is 0.35 of the view's size): with the blob URLs' round trips
through the browser's process, 15-20 ms of the browser's CPU per frame. ``IMAGES_JS`` takes the
JPEGs at ``URL.createObjectURL`` once the view's ``<img>`` is in the page (trame-vtk's first images,
which it checks against the view's size, go its own way), decodes each off the page's thread
(``createImageBitmap``) and draws it into a canvas of the image's size under the hidden ``<img>``,
which the compositor scales to the view; once the canvas has shown one, trame-vtk gets a one-pixel
placeholder URL for each image instead of a blob's. An image decoded after a newer one is dropped.
Each image drawn counts in ``window.fabrikView.images`` and fires a ``fabrik-image`` event on
``#view3d`` (tests and benchmarks wait for it).

Hover: the server publishes where the handles are (state ``handle_screen``: ``[label, x, y]`` with
``x``, ``y`` fractions of the view from its top-left, after each full-size image,
``fabrik3d_web.view.delivery``); the page shows the nearest handle's label within ``HOVER_PX`` of the
mouse in ``#handle-tip``, without asking the server anything.
"""

from __future__ import annotations

# Least milliseconds between two mouse moves sent to the server (a display refreshes every 16.7 ms).
MOVE_INTERVAL_MS = 12
# Farthest a handle's centre may be from the mouse (CSS pixels) for its name to show.
HOVER_PX = 14

# (names other than Vue's few allowed globals are reached through ``window`` in a template's JS)
MESSAGES_JS = """(() => {
  if (window.fabrikMessages) return;
  window.fabrikMessages = 'blob';
  class Part {  // a part of an ArrayBuffer with the Blob methods wslink uses
    constructor(buffer, begin, end) {
      this.buffer = buffer; this.begin = begin; this.end = end; this.size = end - begin;
    }
    slice(a = 0, b = this.size) {
      const lo = Math.max(0, Math.min(this.size, a)), hi = Math.max(lo, Math.min(this.size, b));
      return new Part(this.buffer, this.begin + lo, this.begin + hi);
    }
    arrayBuffer() { return window.Promise.resolve(this.buffer.slice(this.begin, this.end)); }
  }
  const socket = window.WebSocket.prototype, send = socket.send;
  socket.send = function (...args) {
    socket.send = send;
    const receive = this.onmessage;
    if (typeof receive === 'function') {
      this.binaryType = 'arraybuffer';
      const part = (data) => new Part(data, 0, data.byteLength);
      this.onmessage = (e) => receive(e.data instanceof window.ArrayBuffer ? { data: part(e.data) } : e);
      window.fabrikMessages = 'arraybuffer';
    }
    return send.apply(this, args);
  };
})()"""

IMAGES_JS = """(() => {
  if (window.fabrikView) return;
  const view = { images: 0, canvas: null, context: null, taken: 0, drawn: 0 };
  window.fabrikView = view;
  const url = window.URL, create = url.createObjectURL.bind(url);
  const PLACEHOLDER = 'data:image/gif;base64,R0lGODlhAQABAAAAACH5BAEKAAEALAAAAAABAAEAAAICTAEAOw==';
  const draw = (root, img, bitmap) => {
    if (!view.canvas || view.canvas.parentNode !== img.parentNode) {
      view.canvas = window.document.createElement('canvas');
      view.canvas.className = 'fabrik-image';
      view.canvas.style.cssText =
        'position:absolute;left:0;top:0;width:100%;height:100%;z-index:-1;pointer-events:none';
      img.parentNode.insertBefore(view.canvas, img);
      view.context = view.canvas.getContext('2d', { alpha: false });
    }
    img.style.visibility = 'hidden';
    if (view.canvas.width !== bitmap.width || view.canvas.height !== bitmap.height) {
      view.canvas.width = bitmap.width;
      view.canvas.height = bitmap.height;
    }
    view.context.drawImage(bitmap, 0, 0);
    view.images += 1;
    root.dispatchEvent(new window.Event('fabrik-image'));
  };
  url.createObjectURL = (data) => {
    const root = window.document.getElementById('view3d'), img = root && root.querySelector('img');
    if (!img || !(data instanceof window.Blob) || !data.type.startsWith('image/')) return create(data);
    const number = ++view.taken;
    window.createImageBitmap(data).then((bitmap) => {
      if (number > view.drawn && img.isConnected) {
        view.drawn = number;
        draw(root, img, bitmap);
      }
      bitmap.close();
    }, (error) => window.console.warn('fabrik3d: an image of the view could not be decoded', error));
    return view.drawn ? PLACEHOLDER : create(data);  // (the <img> shows the image until the canvas does)
  };
})()"""

VIEW_JS = f"""(() => {{
  let buttons = 0;
  const inView = (e) => {{ const v = window.document.getElementById('view3d'); return v && v.contains(e.target); }};
  window.addEventListener('pointerdown', (e) => {{ buttons = inView(e) ? e.buttons : 0; }}, true);
  window.addEventListener('pointerup', (e) => {{ buttons = buttons & e.buttons; }}, true);
  window.fabrikTuneView = (e) => {{
    const canvas = e && e.pokedRenderer, interactor = canvas && canvas.getInteractor && canvas.getInteractor();
    const style = interactor && interactor.getInteractorStyle();
    if (!style || !style.setThrottleDelay) return;
    if (style.getThrottleDelay() !== {MOVE_INTERVAL_MS}) style.setThrottleDelay({MOVE_INTERVAL_MS});
    if (!buttons) return;
    const [w, h] = canvas.getSize();
    style.invokeRemoteMouseEvent({{
      action: 'down', x: e.position.x / w, y: e.position.y / h,
      buttonLeft: buttons & 1 ? 1 : 0, buttonMiddle: buttons & 4 ? 1 : 0, buttonRight: buttons & 2 ? 1 : 0,
      shiftKey: e.shiftKey ? 1 : 0, altKey: e.altKey ? 1 : 0, ctrlKey: e.controlKey ? 1 : 0, metaKey: 0,
      ...style.getRemoteEventAddOn(),
    }});
  }};
  window.addEventListener('mousemove', (e) => {{
    if (!e.buttons) buttons = 0;
    const view = window.document.getElementById('view3d'), tip = window.document.getElementById('handle-tip');
    if (!view || !tip) return;
    if (e.buttons) {{ if (tip.style.display !== 'none') tip.style.display = 'none'; return; }}
    const r = view.getBoundingClientRect(), x = e.clientX - r.left, y = e.clientY - r.top;
    let best = null, near = {HOVER_PX};
    if (x >= 0 && y >= 0 && x <= r.width && y <= r.height) {{
      for (const h of (handle_screen || [])) {{
        const d = Math.hypot(h[1] * r.width - x, h[2] * r.height - y);
        if (d < near) {{ near = d; best = h; }}
      }}
    }}
    if (!best) {{ tip.style.display = 'none'; return; }}
    tip.textContent = best[0];
    tip.style.left = (view.offsetLeft + best[1] * r.width + 12) + 'px';
    tip.style.top = (view.offsetTop + best[2] * r.height - 34) + 'px';
    tip.style.display = 'block';
  }}, true);
}})()"""
