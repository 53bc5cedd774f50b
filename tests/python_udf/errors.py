"""Python functions that go wrong in the ways tests/python_udf.rs checks weir reports."""
from pyflink.table import DataTypes
from pyflink.table.udf import AggregateFunction, udaf, udf, udtf


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


@udtf(result_types=[DataTypes.STRING(), DataTypes.INT()])
def one_column(s):
    yield s


@udf(result_type=DataTypes.BIGINT(), func_type="pandas")
def batch_total(x):
    import pandas as pd
    return pd.Series([x.sum()])


@udf(result_type=DataTypes.BIGINT(), func_type="pandas")
def scalar_total(x):
    return x.sum()


class Count(AggregateFunction):
    def create_accumulator(self):
        return [0]

    def accumulate(self, accumulator, x):
        accumulator[0] += 1

    def get_value(self, accumulator):
        return accumulator[0]


count = udaf(Count(), result_type=DataTypes.BIGINT(), accumulator_type=DataTypes.ARRAY(DataTypes.BIGINT()))


@udf(result_type=DataTypes.INT())
def hard_exit(n):
    import os
    os._exit(3)


@udaf(result_type=DataTypes.FLOAT(), func_type="pandas")
def mean_udaf(v):
    return v.mean()


class RatioOfLast(AggregateFunction):
    """1 / the last value: get_value raises ZeroDivisionError once a 0 arrives."""

    def create_accumulator(self):
        return [1]

    def accumulate(self, accumulator, x):
        accumulator[0] = x

    def get_value(self, accumulator):
        return 1.0 / accumulator[0]


ratio_of_last = udaf(RatioOfLast(), result_type=DataTypes.DOUBLE(),
                     accumulator_type=DataTypes.ARRAY(DataTypes.BIGINT()))


class NoAccumulator(AggregateFunction):
    """create_accumulator raises."""

    def create_accumulator(self):
        raise RuntimeError("no accumulator today")

    def accumulate(self, accumulator, x):
        accumulator[0] += 1

    def get_value(self, accumulator):
        return accumulator[0]


no_accumulator = udaf(NoAccumulator(), result_type=DataTypes.BIGINT(),
                      accumulator_type=DataTypes.ARRAY(DataTypes.BIGINT()))
