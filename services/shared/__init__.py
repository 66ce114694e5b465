"""What every use case shares: the composition root, the live resolver, API keys and the index
refresh."""
