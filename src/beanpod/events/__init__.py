"""The job event log: schema (shared with analytics) and the date-partitioned writer."""

from beanpod.events.schema import SCHEMA_VERSION, normalise, read_line
from beanpod.events.writer import EventWriter

__all__ = ["SCHEMA_VERSION", "EventWriter", "normalise", "read_line"]
