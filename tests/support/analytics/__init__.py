"""Shared helpers for the event-log and analytics tests (reference model, generators)."""
