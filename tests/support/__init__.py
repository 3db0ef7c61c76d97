"""Helpers shared by the tests: grading runs, exercise cells, figure checks, planted
submissions, and the fixture notebooks (fixtures/, data, not tests)."""
