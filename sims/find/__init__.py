"""``acp-lifecycle find "PATTERN"``: the shortest run of the model matching a sequence of events.

A reviewer asks for a run ("a prompt inserted while other work runs, then ``session/cancel``,
then that prompt's work starts") in the labels the scenarios and ``diff`` print, and gets the
shortest one under any rule set and configuration, or none within the bounds. ``pattern``
parses the query (its docstring is the grammar), ``search`` finds the run.
"""

from .pattern import ACTIONS, Event, Pattern, PatternError, parse
from .search import FindResult, Found, find, find_member

__all__ = ["ACTIONS", "Event", "Pattern", "PatternError", "parse", "FindResult", "Found", "find", "find_member"]
