"""Nereid's Python stub: runs a Triton Python-backend model (model.py) for Nereid's python backend."""
