"""Scaling models and the modelers that fit them."""
