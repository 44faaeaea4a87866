"""Evaluation harness: question sets, metrics, baselines and reports (`carta eval`)."""
