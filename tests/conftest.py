"""Shared test setup: the fixture notebooks are data for the exercise tests, not tests."""

collect_ignore_glob = ["fixtures/*"]
