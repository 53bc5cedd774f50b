"""Python functions written for PyFlink, as a Flink user writes them; weir runs this file unchanged
(tests/python_udf.rs) and Flink 2.3 gave the expected output (udfs.flink.out)."""
import datetime
from decimal import Decimal

from pyflink.table import DataTypes
from pyflink.table.udf import FunctionContext, ScalarFunction, TableFunction, udf, udtf


@udf(result_type=DataTypes.BIGINT())
def add_one(i):
    return i + 1


@udf(result_type=DataTypes.STRING())
def shout(s, times):
    if s is None:
        return None
    return (s.upper() + "!") * times


class Scale(ScalarFunction):
    def open(self, function_context: FunctionContext):
        self.factor = 2.5

    def eval(self, x):
        return x * self.factor


scale = udf(Scale(), result_type=DataTypes.DOUBLE())

name_length = udf(lambda s: len(s) % 7, result_type='INT')


@udf(result_type=DataTypes.DECIMAL(10, 2))
def with_tax(price):
    return price * Decimal('1.2')


@udf(result_type=DataTypes.DATE())
def next_day(d):
    return d + datetime.timedelta(days=1)


@udf(result_type=DataTypes.TIMESTAMP(3))
def add_hour(ts):
    return ts + datetime.timedelta(hours=1)


@udf(result_type=DataTypes.ARRAY(DataTypes.STRING()))
def split_words(s):
    return s.split(' ')


@udf(result_type=DataTypes.MAP(DataTypes.STRING(), DataTypes.INT()))
def word_lengths(s):
    return {w: len(w) for w in s.split(' ')}


@udf(result_type=DataTypes.BOOLEAN())
def is_even(n):
    return n % 2 == 0


@udf(result_type=DataTypes.DOUBLE(), func_type="pandas")
def total(price, qty):
    return price * qty


@udf(result_type=DataTypes.STRING(), func_type="pandas")
def tag(name, qty):
    return name.str.upper() + '-' + qty.astype(str)


@udf(result_type=DataTypes.BIGINT(), func_type="pandas")
def double_it(x):
    return x * 2


@udtf(result_types=[DataTypes.STRING(), DataTypes.INT()])
def words(s):
    if s is None:
        return
    for w in s.split(' '):
        yield w, len(w)


class Repeat(TableFunction):
    def eval(self, s, n):
        for i in range(n):
            yield s


repeat = udtf(Repeat(), result_types=DataTypes.STRING())
