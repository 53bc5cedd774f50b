"""Python functions that go wrong in the ways tests/python_udf.rs checks weir reports."""
from pyflink.table import DataTypes
from pyflink.table.udf import udf, udtf


@udf(result_type=DataTypes.DOUBLE())
def inverse(n):
    return 1 / n


@udf(result_type=DataTypes.BIGINT())
def wrong_type(n):
    return "one"


def plain(n):
    return n


@udtf(result_types=[DataTypes.STRING()])
def split(s):
    for word in s.split(' '):
        yield word
