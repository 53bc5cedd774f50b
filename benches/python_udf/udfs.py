"""The Python functions of the Python-function scenarios (general.sql, pandas.sql), as PyFlink writes them."""
from pyflink.table import DataTypes
from pyflink.table.udf import udf


@udf(result_type=DataTypes.BIGINT())
def add_one(x):
    return x + 1


@udf(result_type=DataTypes.BIGINT(), func_type="pandas")
def add_one_pandas(x):
    return x + 1
