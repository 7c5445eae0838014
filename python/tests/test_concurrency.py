"""Long jobs release the interpreter and honour Ctrl-C; one session serves several threads."""

import os
import signal
import subprocess
import sys
import threading
import time

import collc

# A compare that takes tens of seconds (forests on 32 GPUs at 21 sizes), cancelled between
# cells; then the same session compares again, the flag Ctrl-C set cleared.
CHILD = r"""
import sys, time
import collc
s = collc.load("examples/mi250_2x16.coll")
print("ready", flush=True)
t = time.monotonic()
try:
    s.compare()
except KeyboardInterrupt:
    print(f"interrupted {time.monotonic() - t:.2f}", flush=True)
    c = s.compare(sizes="1MiB", families=["ring"])
    print("again", c.sizes, c.rows[0].winner, flush=True)
    sys.exit(0)
print("finished", flush=True)
sys.exit(1)
"""


def test_ctrl_c_stops_a_long_compare(repo):
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD],
        cwd=repo,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout.readline().strip() == "ready"
        time.sleep(1.5)
        assert child.poll() is None, "the compare ended before it could be interrupted"
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        line = child.stdout.readline()
        waited = time.monotonic() - sent
        rest, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
    assert line.startswith("interrupted"), (line, rest, err)
    assert waited < 5, f"KeyboardInterrupt came {waited:.1f} s after SIGINT"
    assert rest.strip() == "again [1048576] ring", (rest, err)
    assert child.returncode == 0, err


def test_a_second_ctrl_c_does_not_wait(repo):
    # The first Ctrl-C waits for the job to wind down, the second raises at once: here both
    # come together and the interrupt is prompt either way.
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD.replace('c = s.compare(sizes="1MiB", families=["ring"])', "c = None").replace(
            'print("again", c.sizes, c.rows[0].winner, flush=True)', ""
        )],
        cwd=repo,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout.readline().strip() == "ready"
        time.sleep(1.0)
        child.send_signal(signal.SIGINT)
        time.sleep(0.02)
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
    assert "interrupted" in out or "KeyboardInterrupt" in err, (out, err)


def test_jobs_release_the_interpreter(sessions, repo):
    s = sessions(repo / "examples/dgx_a100_2x8.coll")
    done = threading.Event()
    result = {}

    def job():
        t = time.monotonic()
        result["cmp"] = s.compare()
        result["seconds"] = time.monotonic() - t
        done.set()

    worker = threading.Thread(target=job)
    worker.start()
    # Python keeps running in this thread while the compare runs in the other.
    gaps, last, ticks = [], time.monotonic(), 0
    while not done.is_set():
        ticks += 1
        time.sleep(0.002)
        now = time.monotonic()
        gaps.append(now - last)
        last = now
    worker.join()
    assert result["seconds"] > 0.3, "the job was too short to tell"
    assert ticks > 10
    assert max(gaps) < result["seconds"] / 2


def test_one_session_from_several_threads(sessions, repo):
    s = sessions(repo / "examples/dgx_a100_2x8.coll")
    want = s.compare(sizes="1MiB..8MiB").table()
    results = [None] * 4
    errors = []

    def run(i):
        try:
            results[i] = s.compare(sizes="1MiB..8MiB").table() if i % 2 == 0 else s.report().text
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert results[0] == results[2] == want
    assert results[1] == results[3] == s.report().text
