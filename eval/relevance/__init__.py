"""The relevance model's lab: its training pairs, training, leave-one-dataset-out judging and shipping."""
