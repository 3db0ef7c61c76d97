"""Hidden cases from the instructor's secret.

A check's hidden cases are generated from seeds. In the notebook (and in the tests) a seed is the
number the check names; when the grader runs with ``--secret``, every hidden seed is derived
from a key the environment variable :data:`SECRET_ENV` holds, set for the student's kernel and
for the grader's judge alike, so reading ``labs/exercises`` does not tell a student the hidden
inputs, and the kernel and the judge still generate the same ones. That key is never the
instructor's secret: it is :func:`submission_key`, one per submission, so a key seen at grading
time (printed by the student's own code) tells nothing of the secret or of another student's
cases.

Owns: the secret's environment variable and the derivation of hidden seeds. Must not: import
anything from labs or the grader, print, or store the secret anywhere.
"""

from __future__ import annotations

import hashlib
import hmac
import os

__all__ = ["SECRET_ENV", "submission_key", "hidden_seed", "hidden_int", "drawing", "active"]

SECRET_ENV = "LABS_GRADE_SECRET"


def submission_key(secret: str, submission: str) -> str:
    """The key one submission's hidden cases come from: HMAC-SHA256 of the instructor's
    ``secret`` and the ``submission``'s id (its path in the class folder), in hex. The grader
    passes only this to the student's kernel and to its judge."""
    return hmac.new(secret.encode(), submission.encode(), hashlib.sha256).hexdigest()


def active() -> bool:
    return bool(os.environ.get(SECRET_ENV))


def hidden_seed(exercise_id: str, seed: int) -> int:
    """The seed of hidden case ``seed`` of ``exercise_id``: ``seed`` itself without a secret,
    else a 31-bit number from the secret (the same in the kernel and in the judge)."""
    secret = os.environ.get(SECRET_ENV)
    if not secret:
        return seed
    digest = hashlib.sha256(f"{secret}\0{exercise_id}\0{seed}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def hidden_int(exercise_id: str, seed: int, low: int, high: int, default: int) -> int:
    """A hidden case's integer in ``[low, high]``: ``default`` without a secret, else one drawn
    from the secret (a size, a count: the hidden shapes change with the secret too)."""
    if not active():
        return default
    return low + hidden_seed(exercise_id, seed) % (high - low + 1)


def drawing(exercise_id: str, base: int = 0):
    """``draw(key, low, high, default)``: :func:`hidden_int` of ``exercise_id``'s ``base + key``."""
    return lambda key, low, high, default: hidden_int(exercise_id, base + key, low, high, default)
