"""Capture verdict for the viewer: the Qt-free evaluation lives in solver/verdict.py and is re-exported here."""
from solver.verdict import (DEFAULT_CRITERIA, FAIL, NA, PASS, Check, Criteria, CriteriaError,  # noqa: F401
                            Verdict, evaluate, load_criteria)
