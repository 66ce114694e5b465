"""``tool-selector lab train-intent``: the scanner's learned check (tool_selector/trust/intent.py),
fine-tuned and judged leave one kind out. ``examples``: what it is fitted and judged on; ``model``: the
encoder and its head in torch, and their export as the product runs them; ``train``: the run."""
