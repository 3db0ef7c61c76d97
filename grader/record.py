"""The record of one check: what the student's code handed back, as plain data, and its file.

Owns: the format (:data:`VERSION`, ``{"version", "exercise", "args", "events", "outcome"}``),
the codec of values and exceptions (:func:`encode`/:func:`decode`: JSON, tensors and arrays as
raw bytes, a student's own object as an :class:`Opaque` repr; nothing is pickled, no code runs
when reading) and the record files (:func:`record_path`, :func:`write`, :func:`read`:
size-limited, never through a symlink). Used on both sides: by :mod:`grader.recorder` inside
the student's kernel (where the grader injects it) and by :mod:`grader.judge` in the grader.

How a verdict is decided outside the student's process: a check touches the student's code in
two ways only, calling one of the objects it was given, or running a rank body with them among
the arguments. In the kernel every such event and what came back is recorded; the judge runs
the same check again with placeholders, each event returning what was recorded, every other
computation (hidden cases from the instructor's secret, references, comparisons, the verdict)
its own. Must not: run a check, decide a verdict, or import the rest of the grader (it is
copied into the student's kernel).
"""

from __future__ import annotations

import base64
import builtins
import collections
import contextlib
import dataclasses
import enum
import fractions
import json
import keyword
import math
import numbers
import os
import sys
from pathlib import Path
from typing import Any

from labs.exercises import checks, feedback
from labs.messages import text
from labs.runtime.errors import RankError

__all__ = ["RECORDS_ENV", "MAX_RECORD_BYTES", "VERSION", "RecordError", "Opaque", "encode",
           "decode", "encode_exception", "decode_exception", "contains", "body_name", "record_path",
           "write", "read", "why"]

#: Set by the grader in the kernel's environment: the folder the records go to.
RECORDS_ENV = "LABS_GRADE_RECORDS"
MAX_RECORD_BYTES = 64 * 2**20
MAX_DEPTH = 32
VERSION = 1
_TENSOR_DTYPES = ("float64", "float32", "float16", "bfloat16", "int64", "int32", "int16",
                  "int8", "uint8", "bool", "complex64", "complex128")


class RecordError(Exception):
    """A record that cannot be read, or that does not follow the check's events."""


def why(key: str, **values) -> str:
    """The message ``key`` (``record.<name>``, written out in full) of a RecordError."""
    return text(key, **values)


class Opaque:
    """A value the codec does not carry (a student's own object): its type's name and repr."""

    def __init__(self, type_name: str, text: str):
        self.type_name, self.text = type_name, text

    def __repr__(self) -> str:
        return self.text

    def __eq__(self, other) -> bool:
        return False

    __hash__ = object.__hash__


def contains(value, kind: type, depth: int = 0) -> bool:
    """Whether ``value`` (the arguments of a rank body) holds an object of class ``kind`` (a
    stand-in for a student's object) in its lists, tuples or dicts."""
    if isinstance(value, kind):
        return True
    if depth > MAX_DEPTH:
        return False
    if isinstance(value, (list, tuple)):
        return any(contains(v, kind, depth + 1) for v in value)
    if isinstance(value, dict):
        return any(contains(v, kind, depth + 1) for v in value.values())
    return False


def body_name(fn) -> str:
    """How a record names a rank body: ``module.qualname``."""
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


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
    if isinstance(value, enum.Enum) and not isinstance(value, (int, float)):
        return {"__enum__": {"type": type(value).__name__, "name": value.name,
                             "value": encode(value.value, depth + 1)}}
    if isinstance(value, int):  # an IntEnum, a bool-free int subclass: its number
        return int(value)
    if isinstance(value, fractions.Fraction):
        return {"__fraction__": [value.numerator, value.denominator]}
    if isinstance(value, (float, numbers.Real)):  # any other real number: its float
        value = float(value)
        return value if math.isfinite(value) else {"__float__": repr(value)}
    if torch is not None and isinstance(value, torch.Tensor):
        data = _tensor(value)
        if data is not None:
            return data
    if torch is not None and isinstance(value, torch.dtype):
        return {"__dtype__": str(value).replace("torch.", "")}
    if isinstance(value, tuple) and hasattr(type(value), "_fields"):  # a NamedTuple
        return {"__namedtuple__": {"type": type(value).__name__,
                                   "fields": [str(f) for f in type(value)._fields],
                                   "values": [encode(v, depth + 1) for v in value]}}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {"__dataclass__": {"type": type(value).__name__, "fields": [
            [f.name, encode(getattr(value, f.name), depth + 1)]
            for f in dataclasses.fields(value)]}}
    if isinstance(value, list):  # a list subclass too: its items
        return [encode(v, depth + 1) for v in value]
    if isinstance(value, tuple):  # torch.Size and other tuple subclasses: their items
        return {"__tuple__": [encode(v, depth + 1) for v in value]}
    if isinstance(value, dict):  # OrderedDict, defaultdict: their items
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
    return sys.modules.get(name)


def decode(data, depth: int = 0):
    """The value :func:`encode` made ``data`` from (a safe reading: no code runs)."""
    if depth > MAX_DEPTH + 1:
        raise RecordError(why("record.too_deep"))
    if data is None or isinstance(data, (bool, int, float, str)):
        return data
    if isinstance(data, list):
        return [decode(v, depth + 1) for v in data]
    if not isinstance(data, dict) or len(data) != 1:
        raise RecordError(why("record.codec"))
    (kind, body), = data.items()
    if kind == "__tuple__" and isinstance(body, list):
        return tuple(decode(v, depth + 1) for v in body)
    if kind == "__dict__" and isinstance(body, list):
        out = {}
        for pair in body:
            if not isinstance(pair, list) or len(pair) != 2:
                raise RecordError(why("record.dict_entry"))
            key = decode(pair[0], depth + 1)
            try:
                out[key] = decode(pair[1], depth + 1)
            except TypeError:
                raise RecordError(why("record.unhashable")) from None
        return out
    if kind == "__float__" and body in ("nan", "inf", "-inf"):
        return float(body)
    if kind == "__fraction__" and isinstance(body, list) and len(body) == 2 and all(
            type(x) is int for x in body) and body[1]:
        return fractions.Fraction(body[0], body[1])
    if kind in ("__namedtuple__", "__dataclass__", "__enum__") and isinstance(body, dict):
        return _decode_class(kind, body, depth)
    if kind == "__tensor__" and isinstance(body, dict):
        return _decode_tensor(body)
    if kind == "__ndarray__" and isinstance(body, dict):
        return _decode_ndarray(body)
    if kind == "__dtype__" and body in _TENSOR_DTYPES:
        import torch

        return getattr(torch, body)
    if kind == "__opaque__" and isinstance(body, dict):
        return Opaque(str(body.get("type", "object"))[:100], str(body.get("repr", ""))[:200])
    raise RecordError(why("record.codec"))


def _names(type_name, *names) -> bool:  # a class name and field names to make a class with
    return all(isinstance(n, str) and n.isidentifier() and not keyword.iskeyword(n)
               for n in (type_name, *names)) and not any(n.startswith("_") for n in names)


def _decode_class(kind: str, body: dict, depth: int):
    """A NamedTuple, dataclass or Enum member of the same name, fields and values (the class is
    made anew here from names only: no code of the student's runs)."""
    name, fields = body.get("type"), body.get("fields")
    if kind == "__namedtuple__" and isinstance(fields, list) and isinstance(
            body.get("values"), list) and len(fields) == len(body["values"]) and _names(name, *fields):
        return collections.namedtuple(name, fields)(*(decode(v, depth + 1) for v in body["values"]))
    if kind == "__dataclass__" and isinstance(fields, list) and all(
            isinstance(p, list) and len(p) == 2 for p in fields) and _names(name, *(
                p[0] for p in fields)):
        cls = dataclasses.make_dataclass(name, [p[0] for p in fields])
        return cls(*(decode(p[1], depth + 1) for p in fields))
    if kind == "__enum__" and _names(name, body.get("name")):
        with contextlib.suppress(TypeError, ValueError):
            member = body["name"]
            return enum.Enum(name, [(member, decode(body.get("value"), depth + 1))])[member]
    raise RecordError(why("record.codec"))


def _shape(body) -> tuple[int, ...]:
    shape = body.get("shape")
    if not isinstance(shape, list) or not all(isinstance(n, int) and n >= 0 for n in shape):
        raise RecordError(why("record.bad_shape"))
    return tuple(shape)


def _decode_tensor(body: dict):
    import torch

    dtype, shape = body.get("dtype"), _shape(body)
    if dtype not in _TENSOR_DTYPES or not isinstance(body.get("data"), str):
        raise RecordError(why("record.bad_dtype"))
    raw = base64.b64decode(body["data"], validate=True)
    torch_dtype = getattr(torch, dtype)
    numel = math.prod(shape)
    if len(raw) != numel * torch.empty((), dtype=torch_dtype).element_size():
        raise RecordError(why("record.bad_bytes"))
    if not raw:
        return torch.empty(shape, dtype=torch_dtype)
    return torch.frombuffer(bytearray(raw), dtype=torch.uint8).view(torch_dtype).reshape(shape)


def _decode_ndarray(body: dict):
    import numpy

    try:
        dtype = numpy.dtype(str(body.get("dtype")))
    except TypeError:
        raise RecordError(why("record.bad_dtype")) from None
    if dtype.kind not in "biufc" or not isinstance(body.get("data"), str):
        raise RecordError(why("record.bad_dtype"))
    shape = _shape(body)
    raw = base64.b64decode(body["data"], validate=True)
    if len(raw) != math.prod(shape) * dtype.itemsize:
        raise RecordError(why("record.bad_bytes"))
    array = numpy.frombuffer(raw, dtype=dtype).reshape(shape).copy()
    return array[()] if body.get("scalar") and not shape else array


# --- exceptions ------------------------------------------------------------------------------

def encode_exception(exc: BaseException) -> dict:
    """What the check needs of an exception of the student's code (or of a rank), as data:
    its kind, message, the student's line, and for a rank's error the rank's traceback."""
    out: dict[str, Any] = {"type": type(exc).__name__, "message": _text(exc, 8000),
                           "notes": [str(n)[:200] for n in getattr(exc, "__notes__", ())][:8]}
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
    if not isinstance(data, dict):
        raise RecordError(why("record.bad_exception"))
    exc = _decode_exception(data)
    for note in data["notes"] if isinstance(data.get("notes"), list) else ():
        exc.add_note(str(note)[:200])
    return exc


def _decode_exception(data: dict) -> BaseException:
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


def write(exercise_id: str, data: dict) -> None:
    """Write the record ``data`` of ``exercise_id`` where :func:`record_path` says (atomically)."""
    path = record_path(exercise_id)
    if path is None:
        return
    text = json.dumps(data, allow_nan=False)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def read(path: Path) -> dict:
    """A record file, read safely (size-limited, plain JSON)."""
    path = Path(path)
    if path.is_symlink() or not path.is_file():
        raise FileNotFoundError(path)
    if path.stat().st_size > MAX_RECORD_BYTES:
        raise RecordError(why("record.too_large", mib=MAX_RECORD_BYTES // 2**20))
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise RecordError(why("record.not_json", error=exc)) from None
