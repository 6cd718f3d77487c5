"""Look at ``gradlab serve`` in a real web browser: headless Chromium, driven over its
DevTools protocol, clicks and types as a student would and saves screenshots.

    apt-get install chromium-headless-shell     # once; not needed by the test suite
    .venv/bin/python .ci/browser_look.py OUT wait:6 click:638,350 wait:6 shot key:n key:b shot

Starts ``gradlab serve`` on a free port (or uses ``--url``), opens it in a 1280x800
window, runs the steps and writes OUT-0.png, OUT-1.png, ... for each ``shot``. Steps:
``wait:SECONDS``, ``click:X,Y`` (pixels), ``key:K`` (one key, e.g. ``n``), ``shot``.

A manual check, like tmux for the terminal app (the suite tests the served command with a
stand-in server): what the browser shows is a canvas, so the screenshots are for eyes.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

CHROMIUM = "chromium-headless-shell"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise TimeoutError(f"nothing listens on port {port} after {timeout:.0f} s")


async def drive(url: str, out: str, steps: list[str]) -> list[str]:
    import aiohttp  # textual-serve's own dependency: present wherever gradlab serve works

    debug_port = free_port()
    browser = subprocess.Popen(
        [CHROMIUM, "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         "--window-size=1280,800", f"--remote-debugging-port={debug_port}", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True)  # its own process group: the wrapper script starts the rest
    saved: list[str] = []
    try:
        wait_for_port(debug_port)
        async with aiohttp.ClientSession() as http:
            async with http.get(f"http://127.0.0.1:{debug_port}/json") as reply:
                targets = await reply.json()
            page = next(t for t in targets if t["type"] == "page")
            async with http.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=0) as ws:
                ids = iter(range(1, 1_000_000))

                async def call(method: str, **params):
                    call_id = next(ids)
                    await ws.send_json({"id": call_id, "method": method, "params": params})
                    while True:
                        message = await ws.receive_json()
                        if message.get("id") == call_id:
                            return message.get("result", {})

                await call("Page.enable")
                await call("Page.navigate", url=url)
                for step in steps:
                    kind, _, arg = step.partition(":")
                    if kind == "wait":
                        await asyncio.sleep(float(arg))
                    elif kind == "click":
                        x, y = map(float, arg.split(","))
                        for event in ("mousePressed", "mouseReleased"):
                            await call("Input.dispatchMouseEvent", type=event, x=x, y=y,
                                       button="left", clickCount=1)
                    elif kind == "key":
                        await call("Input.dispatchKeyEvent", type="keyDown", key=arg, text=arg)
                        await call("Input.dispatchKeyEvent", type="keyUp", key=arg)
                    elif kind == "shot":
                        shot = await call("Page.captureScreenshot", format="png")
                        path = f"{out}-{len(saved)}.png"
                        with open(path, "wb") as f:
                            f.write(base64.b64decode(shot["data"]))
                        saved.append(path)
                    else:
                        raise ValueError(f"unknown step {step!r}: use wait:S, click:X,Y, "
                                         "key:K or shot")
    finally:  # the whole group: a renderer left behind would keep the app's websocket open
        os.killpg(browser.pid, signal.SIGKILL)
        browser.wait()
    return saved


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", help="screenshots go to OUT-0.png, OUT-1.png, ...")
    parser.add_argument("steps", nargs="*", default=["wait:6", "shot"])
    parser.add_argument("--url", help="an app already served (default: start gradlab serve)")
    opts = parser.parse_args()
    if shutil.which(CHROMIUM) is None:
        print(f"browser_look: {CHROMIUM} is not installed; apt-get install {CHROMIUM}",
              file=sys.stderr)
        return 2
    server = None
    url = opts.url
    if url is None:
        port = free_port()
        gradlab = os.path.join(os.path.dirname(sys.executable), "gradlab")
        server = subprocess.Popen([gradlab, "serve", "--port", str(port)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for_port(port)
        url = f"http://localhost:{port}"
    try:
        for path in asyncio.run(drive(url, opts.out, opts.steps)):
            print(path)
    finally:
        if server is not None:
            server.terminate()
            server.wait(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
