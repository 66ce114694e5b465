"""Fitting the learned parts: the confidence (``lab calibrate``, ``lab calibrate-lodo``), the ranker (``lab
train-ranker``), the memory's judge (``lab memory-fit``) and the shadowing check's classifier (``lab
shadow-fit``)."""
