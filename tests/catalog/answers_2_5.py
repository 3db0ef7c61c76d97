"""Notebook 2.5's answers: the checks' own references called, rules checked in another order,
runner-ups and deciding parts that are not the exercise's, TP kept under 8 instead of the node,
days off by a factor; and right answers written unusually (a rules table, an Enum of reasons, a
dataclass layout, a generator over plans, a Fraction of days)."""

from tests.support.both_ways import Answer

CAPSTONE, DIAGNOSE, DAYS = "ex2_5_capstone", "ex2_5_diagnose", "ex2_5_training_days"

# The reference answer's shape, with one step swapped in by each wrong capstone answer below.
_CAPSTONE = """
def _layout(c):
    return {k: getattr(c, k) for k in ("tp", "pp", "dp", "micro_batch", "v", "zero_stage", "recompute")}

def _parts(e):
    p = {"compute": e.compute_s, "tp": e.exposed_s["tp"], "pp": e.exposed_s["pp"], "dp": e.exposed_s["dp"]}
    p["bubble"] = max(0.0, e.step_time_s - sum(p.values()))
    return p

def my_capstone(model, cluster, train):
    plans = [e for e in pl.plan(model, cluster, train, top=10**6) if FITS(e, cluster)]
    best = plans[0]
    rival = next((e for e in plans if OTHER(e, best)), None)
    if rival is None:
        deciding = "memory"
    else:
        ours, theirs = _parts(best), _parts(rival)
        deciding = DECIDE
    return dict(_layout(best.config), memory_gib=best.memory.total / GiB, step_time_s=best.step_time_s,
                runner_up=None if rival is None else _layout(rival.config), deciding=deciding)
"""
_RIGHT = dict(FITS="e.config.tp <= cluster.gpus_per_node",
              OTHER="(e.config.tp, e.config.pp) != (best.config.tp, best.config.pp)",
              DECIDE="max(ours, key=lambda k: theirs[k] - ours[k])")


def capstone(**change) -> str:
    """The reference's shape with ``change`` (FITS, OTHER, DECIDE: the lines' expressions)."""
    source = _CAPSTONE.replace("FITS(e, cluster)", "FITS").replace("OTHER(e, best)", "OTHER")
    for name, expression in {**_RIGHT, **change}.items():
        source = source.replace(name, expression)
    return source


_DIAGNOSE = """
def my_diagnose(model, cluster, train, config):
    tp, pp, dp, mb = config.tp, config.pp, config.dp, config.micro_batch
    checks = [("gpu_count", lambda: GPU_COUNT), ("tp_node", lambda: TP_NODE),
              ("tp_heads", lambda: TP_HEADS), ("batch", lambda: BATCH)]
    for key, broken in ORDER:
        if broken():
            return key
    try:
        est = pl.estimate(model, cluster, train, tp=tp, pp=pp, dp=dp, v=config.v, micro_batch=mb,
                          zero_stage=config.zero_stage)
    except ValueError:
        return "pipeline"
    return "ok" if est.fits else "memory"
"""
_RULES = dict(GPU_COUNT="tp * pp * dp != cluster.n_gpus", TP_NODE="tp > cluster.gpus_per_node",
              TP_HEADS="model.n_heads % tp or model.n_kv_heads % tp",
              BATCH="train.global_batch % (dp * mb)", ORDER="checks")


def diagnose(**change) -> str:
    """A rules table walked in ``ORDER`` (``checks``), each rule's expression as given."""
    source = _DIAGNOSE
    for name, expression in {**_RULES, **change}.items():
        source = source.replace(name, expression)
    return source


def days(expression: str) -> str:
    return f"""
def my_training_days(n_params, tokens, n_gpus, peak_flops, mfu):
    return {expression}
"""


_PROVIDED = "from labs.exercises import summary_checks  # the notebook's provided cell\n"

WRONG = [
    # --- the checks' own references, in scope through the provided cell's import ---------------
    Answer(DIAGNOSE, "summary_checks.diagnose, the check's own reference", _PROVIDED + """
def my_diagnose(model, cluster, train, config):
    return summary_checks.diagnose(model, cluster, train, config)
""", 0),
    Answer(DIAGNOSE, "summary_checks.broken_rules, the check's helper", _PROVIDED + """
def my_diagnose(model, cluster, train, config):
    return (summary_checks.broken_rules(model, cluster, train, config) or ("ok",))[0]
""", 0),
    Answer(DIAGNOSE, "the check's rules recompiled from their source", _PROVIDED + """
import inspect
from labs.planner import model as planner_model
RULES = summary_checks.RULES
exec(inspect.getsource(summary_checks.broken_rules))
def my_diagnose(model, cluster, train, config):
    return (*broken_rules(model, cluster, train, config), "ok")[0]
""", flagged=True),  # a copy exec'd without the module's imports compiles to other bytecode
    Answer(DAYS, "summary_checks.training_days, the check's own reference", _PROVIDED + days(
        "summary_checks.training_days(n_params, tokens, n_gpus, peak_flops, mfu)"), 0),
    Answer(DAYS, "the course's 6·N·D and seconds formulas", days(
        "cost.compute_seconds(cost.training_flops(n_params, tokens), n_gpus * peak_flops, mfu)"
        " / 86400"), 0),
    Answer(CAPSTONE, "capstone_rules.plan_training, the check's own reference", """
from labs.exercises import capstone_rules
def my_capstone(model, cluster, train):
    return capstone_rules.plan_training(model, cluster, train)
""", 0),
    Answer(CAPSTONE, "the check's answers tabled when the cell runs, outside the check", """
from labs.exercises import capstone_rules
_TABLE = {s.model: capstone_rules.plan_training(*s[1:]) for s, _ in capstone_rules.capstone_scenarios()}
def my_capstone(model, cluster, train):
    return _TABLE[model]
""", flagged=True),
    Answer(CAPSTONE, "labs.summary.best_config for the layout", capstone().replace(
        "    best = plans[0]\n",
        "    from labs.summary import best_config\n    best = best_config(model, cluster, train)\n"),
        0),
    # --- exercise 2: the rules in another order, or a rule not quite the exercise's --------------
    Answer(DIAGNOSE, "the heads before the node", diagnose(ORDER="[checks[0], checks[2], checks[1], checks[3]]"), 0),
    Answer(DIAGNOSE, "the batch before the heads", diagnose(ORDER="[checks[0], checks[1], checks[3], checks[2]]"), 0),
    Answer(DIAGNOSE, "the GPU count last of the four", diagnose(ORDER="checks[1:] + checks[:1]"), 0),
    Answer(DIAGNOSE, "the planner before the batch", diagnose(
        ORDER="checks[:3]", BATCH="False").replace(
        '    return "ok" if est.fits else "memory"',
        '    if train.global_batch % (dp * mb):\n        return "batch"\n'
        '    return "ok" if est.fits else "memory"'), 0),
    Answer(DIAGNOSE, "the KV heads forgotten", diagnose(TP_HEADS="model.n_heads % tp"), 0),
    Answer(DIAGNOSE, "8 GPUs per node hard-coded", diagnose(TP_NODE="tp > 8"), 0),
    Answer(DIAGNOSE, "a node's TP refused at its size (>=)", diagnose(
        TP_NODE="tp >= cluster.gpus_per_node"), 0),
    Answer(DIAGNOSE, "the batch split over dp only", diagnose(BATCH="train.global_batch % dp"), 0),
    Answer(DIAGNOSE, "the GPU count only when too many", diagnose(
        GPU_COUNT="tp * pp * dp > cluster.n_gpus"), 0),
    Answer(DIAGNOSE, "the pipeline judged by pp > layers alone", diagnose().replace(
        "    try:\n", "    if pp > model.n_layers:\n        return \"pipeline\"\n    try:\n"
    ).replace("    except ValueError:\n        return \"pipeline\"\n",
              "    except ValueError:\n        return \"ok\"\n"), 0),
    # --- exercise 1: a runner-up or a deciding part that is not the exercise's --------------------
    Answer(CAPSTONE, "the deciding part: where the runner-up spends most", capstone(
        DECIDE="max(theirs, key=theirs.get)"), 0),
    Answer(CAPSTONE, "the deciding part: where the runner-up loses least", capstone(
        DECIDE="max(ours, key=lambda k: ours[k] - theirs[k])"), 0),
    Answer(CAPSTONE, "the deciding part among the communication only", capstone(
        DECIDE='max(("tp", "pp", "dp"), key=lambda k: theirs[k] - ours[k])'), 0),
    Answer(CAPSTONE, "the runner-up: the planner's second layout", capstone(OTHER="e is not best"), 0),
    Answer(CAPSTONE, "the runner-up: another tp only", capstone(OTHER="e.config.tp != best.config.tp"), 0),
    Answer(CAPSTONE, "the runner-up: another pp only", capstone(OTHER="e.config.pp != best.config.pp"), 0),
    Answer(CAPSTONE, "TP kept at 8 or less instead of the node's GPUs", capstone(FITS="e.config.tp <= 8"), 0),
    Answer(CAPSTONE, "TP across nodes allowed", capstone(FITS="True"), 0),
    Answer(CAPSTONE, "memory in GB", capstone().replace("best.memory.total / GiB", "best.memory.total / 1e9"), 0),
    Answer(CAPSTONE, "step time in milliseconds", capstone().replace(
        "step_time_s=best.step_time_s", "step_time_s=best.step_time_s * 1000"), 0),
    Answer(CAPSTONE, "ZeRO first: pure DP with ZeRO-3", """
def my_capstone(model, cluster, train):
    e = pl.estimate(model, cluster, train, tp=1, pp=1, dp=cluster.n_gpus, zero_stage=3)
    c = e.config
    return {"tp": 1, "pp": 1, "dp": cluster.n_gpus, "micro_batch": c.micro_batch, "v": 1,
            "zero_stage": 3, "recompute": c.recompute, "memory_gib": e.memory.total / GiB,
            "step_time_s": e.step_time_s, "runner_up": None, "deciding": "memory"}
""", 0),
    # --- exercise 3: days off by a factor ----------------------------------------------------------
    Answer(DAYS, "2·N·D: the forward only", days("2 * n_params * tokens / (n_gpus * peak_flops * mfu) / 86400"), 0),
    Answer(DAYS, "seconds, not days", days("6 * n_params * tokens / (n_gpus * peak_flops * mfu)"), 0),
    Answer(DAYS, "hours, not days", days("6 * n_params * tokens / (n_gpus * peak_flops * mfu) / 3600"), 0),
    Answer(DAYS, "one GPU's days", days("6 * n_params * tokens / (peak_flops * mfu) / 86400"), 0),
    Answer(DAYS, "mfu taken as a percentage", days("6 * n_params * tokens / (n_gpus * peak_flops * mfu / 100) / 86400"), 0),
]

RIGHT = [
    Answer(DIAGNOSE, "a rules table walked in order", diagnose()),
    Answer(DIAGNOSE, "an Enum of reasons whose values are REASONS' keys", """
import enum
class Reason(str, enum.Enum):
    OK = "ok"
    GPU_COUNT = "gpu_count"
    TP_NODE = "tp_node"
    TP_HEADS = "tp_heads"
    BATCH = "batch"
    PIPELINE = "pipeline"
    MEMORY = "memory"

class Diagnosis:
    def __call__(self, model, cluster, train, config):
        tp, pp, dp = config.tp, config.pp, config.dp
        if tp * pp * dp != cluster.n_gpus:
            return Reason.GPU_COUNT
        if tp > cluster.gpus_per_node:
            return Reason.TP_NODE
        if model.n_heads % tp or model.n_kv_heads % tp:
            return Reason.TP_HEADS
        if train.global_batch % (dp * config.micro_batch):
            return Reason.BATCH
        try:
            est = pl.estimate(model, cluster, train, tp=tp, pp=pp, dp=dp, v=config.v,
                              micro_batch=config.micro_batch, zero_stage=config.zero_stage)
        except ValueError:
            return Reason.PIPELINE
        return Reason.OK if est.fits else Reason.MEMORY

my_diagnose = Diagnosis()
"""),
    Answer(CAPSTONE, "a dataclass layout, a generator over the plans, an Enum part", """
import dataclasses, enum

@dataclasses.dataclass(frozen=True)
class Layout:
    tp: int
    pp: int
    dp: int
    micro_batch: int
    v: int
    zero_stage: int
    recompute: str

class Part(str, enum.Enum):
    COMPUTE = "compute"
    BUBBLE = "bubble"
    TP = "tp"
    PP = "pp"
    DP = "dp"
    MEMORY = "memory"

def inside_a_node(model, cluster, train):
    for e in pl.plan(model, cluster, train, top=10**6):
        if e.config.tp <= cluster.gpus_per_node:
            yield e

def critical_path(e):
    exposed = {Part.TP: e.exposed_s["tp"], Part.PP: e.exposed_s["pp"], Part.DP: e.exposed_s["dp"]}
    return {Part.COMPUTE: e.compute_s, Part.BUBBLE: e.step_time_s - e.compute_s - sum(exposed.values()), **exposed}

def my_capstone(model, cluster, train):
    plans = inside_a_node(model, cluster, train)
    best = next(plans)
    family = (best.config.tp, best.config.pp)
    rival = next((e for e in plans if (e.config.tp, e.config.pp) != family), None)
    layout = Layout(**{f.name: getattr(best.config, f.name) for f in dataclasses.fields(Layout)})
    if rival is None:
        return {**dataclasses.asdict(layout), "memory_gib": best.memory.total / 2**30,
                "step_time_s": best.step_time_s, "runner_up": None, "deciding": Part.MEMORY}
    ours, theirs = critical_path(best), critical_path(rival)
    return {**dataclasses.asdict(layout), "memory_gib": best.memory.total / 2**30,
            "step_time_s": best.step_time_s,
            "runner_up": Layout(**{f.name: getattr(rival.config, f.name) for f in dataclasses.fields(Layout)}),
            "deciding": max(Part, key=lambda p: theirs.get(p, float("-inf")) - ours.get(p, 0.0))}
"""),
    Answer(CAPSTONE, "numpy numbers and the planner's own Config as the runner-up", capstone().replace(
        "    return dict(", "    import numpy as np\n    return dict(").replace(
        "memory_gib=best.memory.total / GiB", "memory_gib=np.float32(best.memory.total / GiB)").replace(
        "_layout(rival.config)", "rival.config")),
    Answer(DAYS, "an exact fractions.Fraction of days", """
from fractions import Fraction
def my_training_days(n_params, tokens, n_gpus, peak_flops, mfu):
    flops = 6 * Fraction(n_params) * Fraction(tokens)
    return flops / (n_gpus * Fraction(peak_flops) * Fraction(mfu)) / (24 * 60 * 60)
"""),
    Answer(DAYS, "a numpy float", "import numpy as np\n" + days(
        "np.float64(6.0) * n_params * tokens / np.prod([n_gpus, peak_flops, mfu, 86400.0])")),
]
