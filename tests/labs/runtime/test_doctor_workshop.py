"""`make doctor` as the pre-workshop check (issue 40, item 7): it reports cores, memory, the ports,
a 2-, 4- and 8-rank launch with the time each took and its own time, and when ranks do not run
(or run slowly) says what to do: fewer ranks where the notebooks allow it, a hosted notebook.

The launches are stubbed here (the real ones: test_launcher.py's slow doctor test)."""

from __future__ import annotations

import io
import re
import socket
import time

import pytest

from labs import messages
from labs.messages import text
from labs.runtime import doctor as doctor_module
from labs.runtime import launcher
from labs.runtime.doctor import LAUNCH_SIZES, fallback, loopback_port, port_in_use
from tests.support.messages import found_in, pattern


def _doctor(monkeypatch, lang, *, fails=(), most=None):
    """Run the doctor with launches that answer at once (or raise for the rank counts in
    ``fails``); ``most``: the most ranks the machine allows."""
    monkeypatch.setenv(messages.LANG_ENV, lang)

    def launch(fn, n, **kwargs):
        if n in fails:
            raise RuntimeError(f"no {n} ranks here")
        return [float(n * (n + 1) // 2)] * n

    monkeypatch.setattr(launcher, "launch", launch)
    if most is not None:
        monkeypatch.setattr(launcher, "max_world_size", lambda: most)
    out = io.StringIO()
    ok = doctor_module.doctor(out=out)
    return ok, out.getvalue()


def test_the_launches_are_the_course_rank_counts():
    assert LAUNCH_SIZES == (2, 4, 8)  # 2.5 and many cells: 2; 2.0-2.3: 4; 2.4: 8


@pytest.mark.parametrize("lang", messages.LANGUAGES)
def test_a_ready_machine_gets_every_line_and_no_advice(monkeypatch, lang):
    ok, out = _doctor(monkeypatch, lang)
    assert ok, out
    for n in LAUNCH_SIZES:  # each launch with its time, cold and warm
        line = next(ln for ln in out.splitlines() if pattern(
            "doctor.all_reduce_ok", lang=lang, backend="gloo", n=n).fullmatch(ln))
        assert re.search(r"\d+\.\d\d", line), line
    assert pattern("doctor.cpu_and_memory", lang=lang).search(out)
    found_in(out, "doctor.memory_free", lang=lang, need=doctor_module.MEMORY_NEEDED_GIB)
    found_in(out, "doctor.ports", lang=lang, jupyter=8888, torchrun=29500)
    found_in(out, "doctor.took", lang=lang)
    assert text("doctor.fallback", lang=lang) not in out
    assert out.rstrip().splitlines()[-1] == pattern("doctor.took", lang=lang).search(out).group(0)


@pytest.mark.parametrize("lang", messages.LANGUAGES)
def test_eight_ranks_failing_sends_2_4_to_the_hosted_path(monkeypatch, lang):
    ok, out = _doctor(monkeypatch, lang, fails={8})
    assert not ok
    found_in(out, "doctor.all_reduce_failed", lang=lang, backend="gloo", n=8,
             exc_type="RuntimeError")
    after = out.split(text("doctor.fallback", lang=lang), 1)[1]
    assert text("doctor.fallback_no_8", lang=lang) in after
    assert text("doctor.fallback_hosted", lang=lang) in after
    assert text("doctor.fallback_no_4", lang=lang) not in after


@pytest.mark.parametrize("lang", messages.LANGUAGES)
def test_a_machine_for_two_ranks_is_told_to_use_fewer_ranks(monkeypatch, lang):
    ok, out = _doctor(monkeypatch, lang, most=2)
    assert not ok
    for n in (4, 8):
        assert text("doctor.ranks_do_not_fit", lang=lang, n=n) in out
    assert text("doctor.fallback_no_4", lang=lang) in out
    assert text("doctor.fallback_send", lang=lang) in out


@pytest.mark.parametrize("lang", messages.LANGUAGES)
def test_slow_launches_are_a_note_with_the_advice(monkeypatch, lang):
    monkeypatch.setattr(doctor_module, "SLOW_WARM_LAUNCH_S", -1.0)  # every launch is "slow"
    ok, out = _doctor(monkeypatch, lang)
    assert ok, out  # slow is not broken
    found_in(out, "doctor.launches_slow", lang=lang, n=2)
    assert text("doctor.fallback_no_4", lang=lang) in out
    assert text("doctor.fallback_hosted", lang=lang) in out


@pytest.mark.parametrize("lang", messages.LANGUAGES)
def test_a_taken_jupyter_port_is_a_note(monkeypatch, lang):
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        taken = server.getsockname()[1]
        monkeypatch.setattr(doctor_module, "JUPYTER_PORT", taken)
        ok, out = _doctor(monkeypatch, lang)
    assert ok, out
    found_in(out, "doctor.ports", lang=lang, jupyter=taken,
             jupyter_state=text("doctor.port_in_use", lang=lang))
    assert text("doctor.jupyter_port_in_use", lang=lang, port=taken) in out


@pytest.mark.parametrize("lang", messages.LANGUAGES)
def test_no_loopback_is_a_problem(monkeypatch, lang):
    def refused():
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(doctor_module, "loopback_port", refused)
    ok, out = _doctor(monkeypatch, lang)
    assert not ok
    assert text("doctor.ports_no_loopback", lang=lang) in out
    found_in(out, "doctor.loopback_failed", lang=lang)


def test_port_in_use_sees_a_listener_and_not_a_closed_port():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        port = server.getsockname()[1]
        assert port_in_use(port)
    deadline = time.monotonic() + 5
    while port_in_use(port) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not port_in_use(port)


def test_loopback_port_gives_a_port():
    assert 0 < loopback_port() < 65536


@pytest.mark.parametrize("worked, slow, keys", [
    ({2, 4, 8}, False, []),
    ({2, 4}, False, ["doctor.fallback", "doctor.fallback_no_8", "doctor.fallback_hosted",
                     "doctor.fallback_send"]),
    ({2}, False, ["doctor.fallback", "doctor.fallback_no_4", "doctor.fallback_hosted",
                  "doctor.fallback_send"]),
    (set(), False, ["doctor.fallback", "doctor.fallback_hosted", "doctor.fallback_send"]),
    ({2, 4, 8}, True, ["doctor.fallback", "doctor.fallback_no_4", "doctor.fallback_hosted",
                       "doctor.fallback_send"]),
])
def test_fallback_by_what_ran(worked, slow, keys):
    assert fallback(worked, slow) == [text(key) for key in keys]
