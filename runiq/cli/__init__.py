"""The ``runiq`` command line."""
