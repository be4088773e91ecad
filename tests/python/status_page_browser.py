"""Load booger's status page in headless Chromium and watch a project's file count.

Usage: python3 status_page_browser.py CHROMIUM URL PROJECT ADD_FILE SCREENSHOT

Opens URL (the address `booger dashboard` prints, token included), waits until the row of
PROJECT shows a file count, marks the page's window, writes ADD_FILE (a new Python file in
the project), then waits until the count shown changes. Prints one JSON object: the count
before and after, whether the window kept its mark (no reload happened), the seconds the
change took to show, and the page's console errors. Saves a screenshot to SCREENSHOT.

Chromium is driven over the DevTools protocol on a pipe (--remote-debugging-pipe: fd 3
carries commands in, fd 4 answers out, each message ending in a NUL byte), so nothing but
the standard library is needed.
"""

import base64
import json
import os
import subprocess
import sys
import tempfile
import time


class Browser:
    def __init__(self, chromium: str, profile: str):
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()

        def fds():
            # Through fresh numbers: a pipe end may already be 3 or 4, and dup2 onto itself
            # would leave it close-on-exec.
            inbound, outbound = os.dup(to_browser_r), os.dup(from_browser_w)
            os.dup2(inbound, 3)
            os.dup2(outbound, 4)

        self.proc = subprocess.Popen(
            [
                chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", "--remote-debugging-pipe", f"--user-data-dir={profile}",
                "--window-size=1440,900", "about:blank",
            ],
            # Kept open: the fds are closed after preexec_fn runs, except with close_fds off.
            preexec_fn=fds, close_fds=False,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self.next_id = 0
        self.buffer = b""
        self.events = []

    def send(self, method, params=None, session=None):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.to_browser, json.dumps(msg).encode() + b"\0")
        while True:
            reply = self.read()
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]
            self.events.append(reply)

    def read(self):
        while b"\0" not in self.buffer:
            chunk = os.read(self.from_browser, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed its DevTools pipe")
            self.buffer += chunk
        msg, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(msg)

    def close(self):
        try:
            self.send("Browser.close")
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def main(chromium, url, project, add_file, screenshot):
    profile = tempfile.mkdtemp(prefix="booger-chromium-")
    b = Browser(chromium, profile)
    try:
        target = b.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = b.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        b.send("Runtime.enable", session=session)
        b.send("Page.enable", session=session)
        b.send("Page.navigate", {"url": url}, session=session)

        def evaluate(expr):
            r = b.send("Runtime.evaluate", {"expression": expr, "returnByValue": True}, session=session)
            return r["result"].get("value")

        cell = json.dumps(f'tr[data-project="{project}"] [data-field="files"]')
        read_count = f"(() => {{ const c = document.querySelector({cell}); return c ? c.dataset.value : null }})()"

        def wait_for(pred, what, timeout=60):
            deadline = time.time() + timeout
            while time.time() < deadline:
                v = evaluate(read_count)
                if pred(v):
                    return v
                time.sleep(0.1)
            body = evaluate("document.body ? document.body.innerText.slice(0, 2000) : ''")
            raise RuntimeError(f"timed out waiting for {what}; the page shows:\n{body}")

        before = wait_for(lambda v: v not in (None, ""), "the project's file count")
        evaluate("window.__booger_mark = 'kept'; true")
        started = time.time()
        with open(add_file, "w") as f:
            f.write("def added_while_watching():\n    return 'seen on the page'\n")
        after = wait_for(lambda v: v not in (None, "", before), "the file count to change")
        took = time.time() - started
        kept = evaluate("window.__booger_mark === 'kept'")
        live = evaluate("document.getElementById('livetext').textContent")
        shot = b.send("Page.captureScreenshot", {"format": "png"}, session=session)
        with open(screenshot, "wb") as f:
            f.write(base64.b64decode(shot["data"]))
        errors = [
            e["params"]["exceptionDetails"].get("text", "")
            for e in b.events
            if e.get("method") == "Runtime.exceptionThrown"
        ] + [
            " ".join(str(a.get("value", a.get("description", ""))) for a in e["params"]["args"])
            for e in b.events
            if e.get("method") == "Runtime.consoleAPICalled" and e["params"]["type"] == "error"
        ]
        print(json.dumps({
            "before": before, "after": after, "no_reload": kept, "seconds": round(took, 2),
            "live": live, "errors": errors,
        }))
    finally:
        b.close()


if __name__ == "__main__":
    main(*sys.argv[1:6])
