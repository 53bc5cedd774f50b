"""Python aggregate functions written for PyFlink (general, i.e. row-at-a-time), probed against Flink 2.3."""
from pyflink.table import DataTypes
from pyflink.table.udf import AggregateFunction, udaf


class WeightedAvg(AggregateFunction):
    """sum(v * w) / sum(w), NULL inputs skipped; implements retract and merge.
    Types come from get_result_type / get_accumulator_type (udaf(...) called without types)."""

    def create_accumulator(self):
        return [0.0, 0]  # [sum, count]

    def accumulate(self, accumulator, value, weight):
        if value is None or weight is None:
            return
        accumulator[0] += value * weight
        accumulator[1] += weight

    def retract(self, accumulator, value, weight):
        if value is None or weight is None:
            return
        accumulator[0] -= value * weight
        accumulator[1] -= weight

    def merge(self, accumulator, accumulators):
        for other in accumulators:
            accumulator[0] += other[0]
            accumulator[1] += other[1]

    def get_value(self, accumulator):
        if accumulator[1] == 0:
            return None
        return accumulator[0] / accumulator[1]

    def get_result_type(self):
        return DataTypes.DOUBLE()

    def get_accumulator_type(self):
        return DataTypes.ROW([DataTypes.FIELD("f0", DataTypes.DOUBLE()),
                              DataTypes.FIELD("f1", DataTypes.BIGINT())])


weighted_avg = udaf(WeightedAvg())


class ConcatAgg(AggregateFunction):
    """Joins the non-NULL strings with ','; no retract. Types given to udaf(...)."""

    def create_accumulator(self):
        return []

    def accumulate(self, accumulator, s):
        if s is not None:
            accumulator.append(s)

    def merge(self, accumulator, accumulators):
        for other in accumulators:
            accumulator.extend(other)

    def get_value(self, accumulator):
        if not accumulator:
            return None
        return ','.join(accumulator)


concat_agg = udaf(ConcatAgg(), result_type=DataTypes.STRING(),
                  accumulator_type=DataTypes.ARRAY(DataTypes.STRING()), func_type="general")


class MaxBy(AggregateFunction):
    """The string s of the row with the greatest v (first one on ties); no retract."""

    def create_accumulator(self):
        return [None, None]  # [best v, its s]

    def accumulate(self, accumulator, s, v):
        if v is None:
            return
        if accumulator[0] is None or v > accumulator[0]:
            accumulator[0] = v
            accumulator[1] = s

    def get_value(self, accumulator):
        return accumulator[1]


max_by = udaf(MaxBy(), result_type='STRING',
              accumulator_type='ROW<v DOUBLE, s STRING>', func_type="general")


class RetractSum(AggregateFunction):
    """Sum of BIGINTs that supports retract, counting how often each method was called."""

    def create_accumulator(self):
        return [0, 0, 0]  # [sum, accumulate calls, retract calls]

    def accumulate(self, accumulator, x):
        accumulator[1] += 1
        if x is not None:
            accumulator[0] += x

    def retract(self, accumulator, x):
        accumulator[2] += 1
        if x is not None:
            accumulator[0] -= x

    def get_value(self, accumulator):
        return 'sum=%d acc=%d ret=%d' % (accumulator[0], accumulator[1], accumulator[2])


retract_sum = udaf(RetractSum(), result_type=DataTypes.STRING(),
                   accumulator_type=DataTypes.ARRAY(DataTypes.BIGINT()))


class ConcatRetract(AggregateFunction):
    """Like ConcatAgg, but retract removes the first equal string."""

    def create_accumulator(self):
        return []

    def accumulate(self, accumulator, s):
        if s is not None:
            accumulator.append(s)

    def retract(self, accumulator, s):
        if s is not None and s in accumulator:
            accumulator.remove(s)

    def get_value(self, accumulator):
        return ','.join(accumulator)

    def get_result_type(self):
        return 'STRING'

    def get_accumulator_type(self):
        return 'ARRAY<STRING>'


concat_retract = udaf(ConcatRetract())


# A pandas (vectorized) aggregate, only to probe mixing it with the general ones.
@udaf(result_type=DataTypes.DOUBLE(), func_type="pandas")
def pandas_mean(v):
    return v.mean()
