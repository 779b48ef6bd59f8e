"""`bash tools/lab.sh`, the README's third command, as a reader would use it but headless: it
sets up, starts JupyterLab on 127.0.0.1, which answers and offers the course's environment as
the notebooks' kernel; a chapter then runs cell by cell in a kernel that the server started for
it (through the server's own websocket API, as the browser front end does), and the server stops."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = "en/scaled_dot_product_attention.ipynb"  # a quick one: a few seconds of cells
TOKEN = uuid.uuid4().hex


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(url: str, method: str = "GET", body: dict | None = None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Authorization": f"token {TOKEN}",
                                          "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as response:
        text = response.read().decode()
        return response.status, (json.loads(text) if text else None)


@pytest.fixture(scope="module")
def lab():
    port = free_port()
    cmd = ["bash", str(ROOT / "tools" / "lab.sh"), "--no-browser", f"--port={port}",
           "--ServerApp.ip=127.0.0.1", "--ServerApp.port_retries=0",
           f"--IdentityProvider.token={TOKEN}"]
    log = open(ROOT / ".venv" / "test-lab.log", "w")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120  # set-up is quick when .venv is in place
        while True:
            try:
                if request(f"{base}/api/status")[0] == 200:
                    break
            except OSError:
                pass
            assert proc.poll() is None, (ROOT / ".venv" / "test-lab.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "JupyterLab did not answer within 120 s"
            time.sleep(0.5)
        yield base, proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
        log.close()


def test_lab_answers_on_localhost_and_serves_jupyterlab(lab):
    base, _ = lab
    status, info = request(f"{base}/api/status")
    assert status == 200 and "started" in info
    with urllib.request.urlopen(f"{base}/lab?token={TOKEN}", timeout=30) as page:
        assert page.status == 200 and b"JupyterLab" in page.read()


def test_the_notebooks_kernel_is_the_course_environment(lab):
    base, _ = lab
    _, specs = request(f"{base}/api/kernelspecs")
    spec = specs["kernelspecs"]["python3"]["spec"]
    # "python" is replaced by the server's own interpreter, .venv's, when the kernel starts
    # (jupyter_client); the chapter test below checks the running kernel's sys.prefix.
    assert spec["argv"][0] in ("python", "python3") or \
        Path(spec["argv"][0]).resolve().parent == (ROOT / ".venv" / "bin").resolve(), spec["argv"]
    kernel_name = nbformat.read(ROOT / "chapters" / CHAPTER, as_version=4).metadata.kernelspec.name
    assert kernel_name == "python3" and specs["default"] == "python3"


async def run_cells(ws_url: str, cells: list[str]) -> list[dict]:
    from tornado.websocket import websocket_connect

    conn = await websocket_connect(ws_url)
    session, replies = uuid.uuid4().hex, []
    try:
        for code in cells:
            msg_id = uuid.uuid4().hex
            await conn.write_message(json.dumps({
                "header": {"msg_id": msg_id, "username": "test", "session": session,
                           "msg_type": "execute_request", "version": "5.3"},
                "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
                "content": {"code": code, "silent": False, "store_history": True,
                            "user_expressions": {}, "allow_stdin": False, "stop_on_error": True}}))
            while True:
                raw = await asyncio.wait_for(conn.read_message(), timeout=300)
                assert raw is not None, "the kernel's websocket closed"
                msg = json.loads(raw)
                if msg.get("parent_header", {}).get("msg_id") == msg_id and msg["msg_type"] == "execute_reply":
                    replies.append(msg["content"])
                    break
    finally:
        conn.close()
    return replies


def test_a_chapter_runs_in_a_kernel_the_server_started(lab):
    base, proc = lab
    _, session = request(f"{base}/api/sessions", "POST", {
        "path": f"chapters/{CHAPTER}", "type": "notebook", "name": Path(CHAPTER).name,
        "kernel": {"name": "python3"}})
    kernel_id = session["kernel"]["id"]
    cells = [c.source for c in nbformat.read(ROOT / "chapters" / CHAPTER, as_version=4).cells
             if c.cell_type == "code"]
    ws = f"{base.replace('http', 'ws')}/api/kernels/{kernel_id}/channels?token={TOKEN}"
    # The kernel runs .venv's Python, in the notebook's folder (labels in English, exercises found).
    where = (f"import os, sys; assert os.path.realpath(sys.prefix) == {str((ROOT / '.venv').resolve())!r}, "
             "sys.prefix; assert os.getcwd().endswith('chapters/en'), os.getcwd()")
    replies = asyncio.run(run_cells(ws, [where] + cells))
    failed = [(i, r.get("ename"), r.get("evalue")) for i, r in enumerate(replies) if r["status"] != "ok"]
    assert failed == [] and len(replies) == len(cells) + 1
    assert request(f"{base}/api/sessions/{session['id']}", "DELETE")[0] == 204
    assert proc.poll() is None, "the server should still be running until the fixture stops it"


def test_server_stops_when_asked(lab):
    _, proc = lab
    os.killpg(proc.pid, signal.SIGTERM)
    assert proc.wait(timeout=30) is not None
