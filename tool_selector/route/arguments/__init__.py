"""Stage 5, route: the next call's arguments, taken from the request (``fill_arguments``).

Pure: no I/O, no model. The request's concrete arguments are recognised by tool_selector/core/arguments.py;
this package maps them to a tool's parameters (fill.py), reads places, dates and times in the form the
tool takes them (places.py, when.py) and finds where each candidate value sits in the request (spans.py).
"""

from tool_selector.route.arguments.fill import Filled, fill_arguments

__all__ = ["Filled", "fill_arguments"]
