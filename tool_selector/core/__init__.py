"""The vocabulary every stage shares: models, names and ids, errors, hashes, files read with a limit,
logging set-up, processes, token counts."""
