"""Python functions for examples/python_udf.sql, written for PyFlink: weir runs the file unchanged."""
from pyflink.table import DataTypes
from pyflink.table.udf import ScalarFunction, udf


@udf(result_type=DataTypes.STRING())
def size_class(amount):
    if amount is None:
        return None
    return "large" if amount >= 50 else "small"


class WithTax(ScalarFunction):
    """A function written as a class: `open` runs once, `eval` per row."""

    def open(self, function_context):
        self.rate = float(function_context.get_job_parameter("tax-rate", "0.2"))

    def eval(self, amount):
        return None if amount is None else float(amount) * (1 + self.rate)


with_tax = udf(WithTax(), result_type=DataTypes.DOUBLE())


@udf(result_type=DataTypes.DOUBLE(), func_type="pandas")
def order_total(quantity, unit_price):
    """A pandas function: called once per batch of rows, each argument a pandas.Series."""
    return quantity * unit_price
