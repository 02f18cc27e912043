"""PySpark analytics over the event log (imports only ``beanpod.events.schema``).

Modules: ``schema`` (re-export), ``read``, ``transforms``, ``write``, ``report``,
``pipeline`` (``run``), ``job`` (spark-submit entry) and ``bundle`` (the --py-files zip).
Importing this package does not import pyspark.
"""
