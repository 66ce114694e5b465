"""What every use case shares: the composition root, the live resolver, API keys, upstream sessions
and the index refresh."""
