"""A file that uses PyFlink's program API, which weir does not have."""
from pyflink.table import TableEnvironment  # noqa: F401
