"""Fitting the learned parts: the confidence (``lab calibrate``) and the ranker (``lab train-ranker``)."""
