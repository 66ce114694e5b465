"""The gateway's memory of confirmed choices: what it records of a session and how a decision uses it."""
