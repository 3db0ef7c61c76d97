"""Record in the student's kernel, replay in the grader: how a verdict is decided outside the
student's process.

A check touches the student's code in two ways only: it calls one of the objects it was given
(``student_fn(size, n)``, in the notebook's process), or it runs a rank body with them among the
arguments (:func:`labs.exercises.ranks.run_on_ranks`). When the grader runs a notebook, the
environment variable :data:`RECORDS_ENV` names a folder; :func:`labs.exercises.checks.run_check`
then gives the check :class:`StudentArg` wrappers and a :class:`Recorder`, and every such event
-- which object, which rank body on how many ranks, and what came back (a value or an exception)
-- is written, as plain data, to ``<folder>/<exercise id>.json`` (:func:`encode`: JSON, tensors
as raw bytes; nothing is pickled).

The grader (:mod:`labs.exercises.judge`, in its own process) runs the same check again with
placeholders in place of the student's objects and a :class:`Replayer`: each event returns what
was recorded, every other computation -- the hidden cases from the instructor's secret, the
reference results, the comparisons, the verdict -- runs in the grader. A record that does not
follow the check's own sequence of events fails the exercise. What the student's kernel can do
to its own check (patch it, hide its errors, skip it) therefore changes only the data it hands
back; to pass, that data must be the right answer to cases it could not know in advance.
"""

from __future__ import annotations

import base64
import builtins
import contextlib
import json
import math
import os
from pathlib import Path
from typing import Any, Callable

__all__ = ["RECORDS_ENV", "MAX_RECORD_BYTES", "RecordError", "StudentArg", "Recorder",
           "Replayer", "Placeholder", "Opaque", "current", "active", "encode", "decode",
           "encode_exception", "decode_exception", "contains_student", "unwrap", "record_path",
           "write", "read"]

#: Set by the grader in the kernel's environment: the folder the records go to.
RECORDS_ENV = "LABS_GRADE_RECORDS"
MAX_RECORD_BYTES = 64 * 2**20
MAX_DEPTH = 32
VERSION = 1
_TENSOR_DTYPES = ("float64", "float32", "float16", "bfloat16", "int64", "int32", "int16",
                  "int8", "uint8", "bool", "complex64", "complex128")

_session: "Recorder | Replayer | None" = None


class RecordError(Exception):
    """A record that cannot be read, or that does not follow the check's events."""


def _why(key: str, **values) -> str:
    from labs.messages import text

    return text(f"record.{key}", **values)


class Opaque:
    """A value the codec does not carry (a student's own object): its type's name and repr."""

    def __init__(self, type_name: str, text: str):
        self.type_name, self.text = type_name, text

    def __repr__(self) -> str:
        return self.text

    def __eq__(self, other) -> bool:
        return False

    __hash__ = object.__hash__


class StudentArg:
    """One argument of a check, as the check sees it while recording: calling it calls the
    student's object and records what came back; attributes are the object's own."""

    def __init__(self, index: int, target: Any, session: "Recorder"):
        self._index, self._target, self._session = index, target, session

    def __call__(self, *args, **kwargs):
        __tracebackhide__ = True  # noqa: F841
        return self._session.call(self, args, kwargs)

    def __getattr__(self, name):
        return getattr(self._target, name)


class Placeholder:
    """One argument of a check while the grader replays it: there is no student object here."""

    def __init__(self, index: int, session: "Replayer"):
        self._index, self._session = index, session

    def __call__(self, *args, **kwargs):
        __tracebackhide__ = True  # noqa: F841
        return self._session.call(self, args, kwargs)

    def __getattr__(self, name):
        raise RecordError(_why("attribute", name=name))


def contains_student(value, depth: int = 0) -> bool:
    """Whether ``value`` (arguments of a rank body) holds a student object."""
    if isinstance(value, (StudentArg, Placeholder)):
        return True
    if depth > MAX_DEPTH:
        return False
    if isinstance(value, (list, tuple)):
        return any(contains_student(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return any(contains_student(v, depth + 1) for v in value.values())
    return False


def unwrap(value):
    """``value`` with every :class:`StudentArg` replaced by the student's own object."""
    if isinstance(value, StudentArg):
        return value._target
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(unwrap(v) for v in value)
    if isinstance(value, list):
        return [unwrap(v) for v in value]
    if isinstance(value, dict):
        return {k: unwrap(v) for k, v in value.items()}
    return value


def _body_name(fn) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


class Recorder:
    """The events of one check run in the student's kernel."""

    def __init__(self, exercise_id: str, targets: tuple):
        self.exercise_id = exercise_id
        self.args = tuple(StudentArg(i, t, self) for i, t in enumerate(targets))
        self.events: list[dict] = []

    def _run(self, event: dict, work: Callable):
        """Append ``event``, do ``work()``, and record what it returned or raised."""
        __tracebackhide__ = True  # noqa: F841
        self.events.append(event)
        try:
            result = work()
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:
            event["raised"] = encode_exception(exc)
            raise
        event["result"] = encode(result)
        return result

    def call(self, arg: StudentArg, args, kwargs):
        __tracebackhide__ = True  # noqa: F841
        return self._run({"kind": "call", "arg": arg._index},
                         lambda: arg._target(*unwrap(args), **unwrap(kwargs)))

    def ranks(self, fn, world_size: int, args, run: Callable):
        return self._run({"kind": "ranks", "body": _body_name(fn), "world_size": int(world_size)},
                         lambda: run(unwrap(args)))

    def as_dict(self, outcome: str) -> dict:
        return {"version": VERSION, "exercise": self.exercise_id, "args": len(self.args),
                "events": self.events, "outcome": outcome}


class Replayer:
    """The grader's side: a check run whose student events come from a record."""

    def __init__(self, exercise_id: str, n_args: int, record: dict):
        if not isinstance(record, dict) or record.get("version") != VERSION:
            raise RecordError(_why("version"))
        if record.get("exercise") != exercise_id:
            raise RecordError(_why("other_exercise", got=record.get("exercise"),
                                   wanted=exercise_id))
        if record.get("args") != n_args or not isinstance(record.get("events"), list):
            raise RecordError(_why("arguments"))
        self.exercise_id = exercise_id
        self.args = tuple(Placeholder(i, self) for i in range(n_args))
        self.events = record["events"]
        self.position = 0

    def _next(self, **expected) -> dict:
        if self.position >= len(self.events):
            raise RecordError(_why("ends_early", n=self.position + 1))
        event = self.events[self.position]
        self.position += 1
        if not isinstance(event, dict) or any(event.get(k) != v for k, v in expected.items()):
            raise RecordError(_why("wrong_event", n=self.position, expected=expected))
        return event

    def _outcome(self, event: dict):
        if "raised" in event:
            raise decode_exception(event["raised"])
        if "result" not in event:
            raise RecordError(_why("no_outcome", n=self.position))
        return decode(event["result"])

    def call(self, arg: Placeholder, args, kwargs):
        __tracebackhide__ = True  # noqa: F841
        return self._outcome(self._next(kind="call", arg=arg._index))

    def ranks(self, fn, world_size: int, args, run: Callable):
        result = self._outcome(self._next(kind="ranks", body=_body_name(fn),
                                          world_size=int(world_size)))
        if not isinstance(result, list) or len(result) != int(world_size):
            raise RecordError(_why("per_rank", n=self.position))
        return result

    def finished(self) -> None:
        """Raise RecordError if the record holds events the check did not ask for."""
        if self.position != len(self.events):
            raise RecordError(_why("extra_events", n=len(self.events) - self.position))


def current() -> "Recorder | Replayer | None":
    return _session


@contextlib.contextmanager
def active(session: "Recorder | Replayer"):
    """Make ``session`` the one :func:`labs.exercises.ranks.run_on_ranks` reports to."""
    global _session
    saved, _session = _session, session
    try:
        yield session
    finally:
        _session = saved


# --- the codec: plain JSON, no pickle ---------------------------------------------------------

def _tensor(value) -> dict | None:
    import torch

    dtype = str(value.dtype).replace("torch.", "")
    if dtype not in _TENSOR_DTYPES or value.layout != torch.strided or value.is_quantized:
        return None
    data = value.detach()
    if type(data) is not torch.Tensor:  # a subclass (a Parameter, say): its plain values
        try:
            data = data.as_subclass(torch.Tensor)
        except Exception:  # noqa: BLE001 - a subclass that will not: opaque
            return None
    data = data.to("cpu").contiguous()
    raw = data.reshape(-1).view(torch.uint8).numpy().tobytes() if data.numel() else b""
    return {"__tensor__": {"dtype": dtype, "shape": list(data.shape),
                           "data": base64.b64encode(raw).decode("ascii")}}


def encode(value, depth: int = 0):
    """``value`` as JSON data: None, bools, ints, floats (nan/inf too), str, lists, tuples,
    dicts, torch tensors and numpy arrays/scalars; anything else as :class:`Opaque`."""
    if depth > MAX_DEPTH:
        return {"__opaque__": {"type": "deep", "repr": "…"}}
    if value is None or isinstance(value, (bool, str)):
        return value
    torch = _module("torch")
    numpy = _module("numpy")
    if numpy is not None and isinstance(value, (numpy.ndarray, numpy.generic)):
        array = numpy.asarray(value)
        if array.dtype.kind in "biufc":
            return {"__ndarray__": {"dtype": array.dtype.str, "shape": list(array.shape),
                                    "scalar": isinstance(value, numpy.generic),
                                    "data": base64.b64encode(
                                        numpy.ascontiguousarray(array).tobytes()).decode()}}
    if isinstance(value, int):
        return int(value) if type(value) is int else {"__opaque__": _opaque(value)}
    if isinstance(value, float):
        if type(value) is not float:
            return {"__opaque__": _opaque(value)}
        return value if math.isfinite(value) else {"__float__": repr(value)}
    if torch is not None and isinstance(value, torch.Tensor):
        data = _tensor(value)
        if data is not None:
            return data
    if torch is not None and isinstance(value, torch.dtype):
        return {"__dtype__": str(value).replace("torch.", "")}
    if isinstance(value, list) and type(value) is list:
        return [encode(v, depth + 1) for v in value]
    if isinstance(value, tuple) and (type(value) is tuple or _module("torch") is not None
                                     and isinstance(value, torch.Size)):
        return {"__tuple__": [encode(v, depth + 1) for v in value]}
    if isinstance(value, dict) and type(value) is dict:
        return {"__dict__": [[encode(k, depth + 1), encode(v, depth + 1)]
                             for k, v in value.items()]}
    return {"__opaque__": _opaque(value)}


def _opaque(value) -> dict:
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a student's __repr__ that fails
        text = f"<{type(value).__name__}>"
    return {"type": type(value).__name__, "repr": text[:200]}


def _module(name: str):
    import sys

    return sys.modules.get(name)


def decode(data, depth: int = 0):
    """The value :func:`encode` made ``data`` from (a safe reading: no code runs)."""
    if depth > MAX_DEPTH + 1:
        raise RecordError(_why("too_deep"))
    if data is None or isinstance(data, (bool, int, float, str)):
        return data
    if isinstance(data, list):
        return [decode(v, depth + 1) for v in data]
    if not isinstance(data, dict) or len(data) != 1:
        raise RecordError(_why("codec"))
    (kind, body), = data.items()
    if kind == "__tuple__" and isinstance(body, list):
        return tuple(decode(v, depth + 1) for v in body)
    if kind == "__dict__" and isinstance(body, list):
        out = {}
        for pair in body:
            if not isinstance(pair, list) or len(pair) != 2:
                raise RecordError(_why("dict_entry"))
            key = decode(pair[0], depth + 1)
            try:
                out[key] = decode(pair[1], depth + 1)
            except TypeError:
                raise RecordError(_why("unhashable")) from None
        return out
    if kind == "__float__" and body in ("nan", "inf", "-inf"):
        return float(body)
    if kind == "__tensor__" and isinstance(body, dict):
        return _decode_tensor(body)
    if kind == "__ndarray__" and isinstance(body, dict):
        return _decode_ndarray(body)
    if kind == "__dtype__" and body in _TENSOR_DTYPES:
        import torch

        return getattr(torch, body)
    if kind == "__opaque__" and isinstance(body, dict):
        return Opaque(str(body.get("type", "object"))[:100], str(body.get("repr", ""))[:200])
    raise RecordError(_why("codec"))


def _shape(body) -> tuple[int, ...]:
    shape = body.get("shape")
    if not isinstance(shape, list) or not all(isinstance(n, int) and n >= 0 for n in shape):
        raise RecordError(_why("bad_shape"))
    return tuple(shape)


def _decode_tensor(body: dict):
    import torch

    dtype, shape = body.get("dtype"), _shape(body)
    if dtype not in _TENSOR_DTYPES or not isinstance(body.get("data"), str):
        raise RecordError(_why("bad_dtype"))
    raw = base64.b64decode(body["data"], validate=True)
    torch_dtype = getattr(torch, dtype)
    numel = math.prod(shape)
    if len(raw) != numel * torch.empty((), dtype=torch_dtype).element_size():
        raise RecordError(_why("bad_bytes"))
    if not raw:
        return torch.empty(shape, dtype=torch_dtype)
    return torch.frombuffer(bytearray(raw), dtype=torch.uint8).view(torch_dtype).reshape(shape)


def _decode_ndarray(body: dict):
    import numpy

    try:
        dtype = numpy.dtype(str(body.get("dtype")))
    except TypeError:
        raise RecordError(_why("bad_dtype")) from None
    if dtype.kind not in "biufc" or not isinstance(body.get("data"), str):
        raise RecordError(_why("bad_dtype"))
    shape = _shape(body)
    raw = base64.b64decode(body["data"], validate=True)
    if len(raw) != math.prod(shape) * dtype.itemsize:
        raise RecordError(_why("bad_bytes"))
    array = numpy.frombuffer(raw, dtype=dtype).reshape(shape).copy()
    return array[()] if body.get("scalar") and not shape else array


# --- exceptions ------------------------------------------------------------------------------

def encode_exception(exc: BaseException) -> dict:
    """What the check needs of an exception of the student's code (or of a rank), as data:
    its kind, message, the student's line, and for a rank's error the rank's traceback."""
    from labs.exercises import checks, feedback

    out: dict[str, Any] = {"type": type(exc).__name__, "message": _text(exc, 8000)}
    if isinstance(exc, checks.ExerciseIncomplete):
        out["class"] = "incomplete"
    elif isinstance(exc, checks.ExerciseFailed):
        out["class"] = "failed"
        out["kind"] = getattr(exc, "kind", "wrong")
    elif feedback.rank_error(exc) is exc:
        out["class"] = "rank"
        out["rank"] = int(getattr(exc, "rank", 0) or 0)
        out["exc_type"] = str(getattr(exc, "exc_type", "") or "")[:200]
        out["remote_traceback"] = str(getattr(exc, "remote_traceback", "") or "")[-20000:]
        original = getattr(exc, "original", None)
        if isinstance(original, BaseException):
            out["original"] = encode_exception(original)
    else:
        out["class"] = "error"
        frame = feedback.student_frame(exc)
        if frame is not None:
            out["frame"] = [frame.place, frame.line, frame.func, frame.text]
    return out


def _text(exc: BaseException, limit: int) -> str:
    try:
        return str(exc)[:limit]
    except Exception:  # noqa: BLE001
        return ""


def _builtin_class(name: str) -> type:
    found = getattr(builtins, str(name), None)
    if isinstance(found, type) and issubclass(found, Exception):
        return found
    return type(str(name)[:100] or "Exception", (Exception,), {})


def decode_exception(data: dict) -> BaseException:
    """An exception that makes the check say what the recorded one made it say."""
    from labs.exercises import checks, feedback
    from labs.runtime.errors import RankError

    if not isinstance(data, dict):
        raise RecordError(_why("bad_exception"))
    message = str(data.get("message", ""))
    kind = data.get("class")
    if kind == "incomplete":
        return checks.ExerciseIncomplete(message)
    if kind == "failed":
        failed = checks.ExerciseFailed(message)
        if data.get("kind") in ("wrong", "error", "timeout"):
            failed.kind = data["kind"]
        return failed
    if kind == "rank":
        original = data.get("original")
        return RankError(message, rank=int(data.get("rank", 0)),
                         exc_type=str(data.get("exc_type", "")),
                         remote_traceback=str(data.get("remote_traceback", "")),
                         original=decode_exception(original) if isinstance(original, dict)
                         else None)
    cls = _builtin_class(str(data.get("type", "Exception")))
    try:
        exc = cls(message)
    except Exception:  # noqa: BLE001 - a builtin that wants other arguments
        exc = _builtin_class("Exception")(message)
    frame = data.get("frame")
    if isinstance(frame, list) and len(frame) == 4:
        exc.recorded_frame = feedback.Frame(str(frame[0]), int(frame[1]) if isinstance(
            frame[1], int) else 0, str(frame[2]), str(frame[3]))
    return exc


# --- files -----------------------------------------------------------------------------------

def record_path(exercise_id: str, folder: str | os.PathLike | None = None) -> Path | None:
    """Where the record of ``exercise_id`` goes (None when no grader asked for records)."""
    folder = folder if folder is not None else os.environ.get(RECORDS_ENV)
    if not folder:
        return None
    safe = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in exercise_id)
    return Path(folder) / f"{safe}.json"


def write(recorder: Recorder, outcome: str) -> None:
    path = record_path(recorder.exercise_id)
    if path is None:
        return
    data = json.dumps(recorder.as_dict(outcome), allow_nan=False)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(data, encoding="utf-8")
    os.replace(tmp, path)


def read(path: Path) -> dict:
    """A record file, read safely (size-limited, plain JSON)."""
    path = Path(path)
    if path.is_symlink() or not path.is_file():
        raise FileNotFoundError(path)
    if path.stat().st_size > MAX_RECORD_BYTES:
        raise RecordError(_why("too_large", mib=MAX_RECORD_BYTES // 2**20))
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise RecordError(_why("not_json", error=exc)) from None
