"""Benchmarks: ``python -m labs.bench NAME``. Speed targets live here, never in the tests."""

BENCHMARKS = {
    "launch": "labs.bench.launch",
    "collectives": "labs.bench.collectives",
    "ddp": "labs.bench.ddp",
    "gpu": "labs.bench.gpu",
    "pp": "labs.bench.pp",
    "tp": "labs.bench.tp",
}
