"""Python scalar and table functions whose EXPLAIN explain.sql compares with Flink 2.3's."""
from pyflink.table import DataTypes
from pyflink.table.udf import udf, udtf


@udf(result_type=DataTypes.BIGINT())
def add_one(i):
    return i + 1


@udf(result_type=DataTypes.BIGINT(), func_type="pandas")
def add_one_pandas(i):
    return i + 1


@udtf(result_types=DataTypes.STRING())
def split_words(s):
    if s is None:
        return
    for w in s.split(' '):
        yield w


@udtf(result_types=[DataTypes.STRING(), DataTypes.INT()])
def words(s):
    if s is None:
        return
    for w in s.split(' '):
        yield w, len(w)
