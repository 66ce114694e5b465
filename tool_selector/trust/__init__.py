"""Trust: what a tool's definition may carry before an agent sees it.

``text``: invisible and bidirectional characters, found and stripped. ``definition``: the pinned hash of a
tool's definition. ``scanner``: rules that read a definition as an attacker wrote it.
"""
