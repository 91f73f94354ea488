"""The error of bad input files (scenario, mechanism, campaign, criteria): names the file, the key and the problem."""
from __future__ import annotations


class InputError(ValueError):
    """Bad input in a file: `path: key: problem`."""

    def __init__(self, path, key: str, problem: str):
        self.path, self.key, self.problem = str(path), key, problem
        super().__init__(f"{self.path}: {key}: {problem}")
