"""Long jobs release the interpreter and honour Ctrl-C; one session serves several threads."""

import signal
import subprocess
import sys
import threading
import time

import collc

# A compare that takes about 10 s (four MI250 boxes, 64 GPUs, at 21 sizes), cancelled between
# cells; then the same session compares again, the flag Ctrl-C set cleared.
CHILD = r"""
import sys, time
import collc
s = collc.load("examples/mi250_2x16.coll", params={"clusters": 4})
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


def _spawn(repo, script):
    """`script` run by this Python in a child process, its output read as text."""
    return subprocess.Popen(
        [sys.executable, "-c", script],
        cwd=repo,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _stop(child):
    """Kills `child` if it is still running."""
    if child.poll() is None:
        child.kill()


def test_ctrl_c_stops_a_long_compare(repo):
    child = _spawn(repo, CHILD)
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
        _stop(child)
    assert line.startswith("interrupted"), (line, rest, err)
    assert waited < 5, f"KeyboardInterrupt came {waited:.1f} s after SIGINT"
    assert rest.strip() == "again [1048576] ring", (rest, err)
    assert child.returncode == 0, err


# A job that does not poll for cancellation (lowering and proving 1,024 GPUs' forest, about
# 5 s): the first Ctrl-C waits for it, the second raises at once.
UNCANCELLABLE = r"""
import time
import collc
s = collc.load("examples/dgx_a100_fat_tree_1024.coll")
print("ready", flush=True)
t = time.monotonic()
try:
    s.ir()
except KeyboardInterrupt:
    print(f"interrupted {time.monotonic() - t:.2f}", flush=True)
"""


def test_a_second_ctrl_c_does_not_wait(repo):
    child = _spawn(repo, UNCANCELLABLE)
    try:
        assert child.stdout.readline().strip() == "ready"
        time.sleep(0.5)
        child.send_signal(signal.SIGINT)
        time.sleep(1.0)
        assert child.poll() is None, "the first Ctrl-C did not wait for the job"
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        line = child.stdout.readline()
        waited = time.monotonic() - sent
        out, err = child.communicate(timeout=60)
    finally:
        _stop(child)
    assert line.startswith("interrupted"), (line, out, err)
    assert waited < 1.5, f"the second Ctrl-C took {waited:.1f} s"


def test_jobs_release_the_interpreter(sessions, repo):
    # A compare long enough to tell (multi-channel rings on 32 GPUs at large sizes).
    s = sessions(repo / "examples/mi250_2x16.coll")
    done = threading.Event()
    result = {}

    def job():
        t = time.monotonic()
        result["cmp"] = s.compare(sizes="16MiB..1GiB")
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
