"""Accuracy and speed benchmarks of perfcast against Extra-P (run as ``python -m benchmarks.X``)."""
