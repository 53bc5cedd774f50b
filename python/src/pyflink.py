"""weir's implementation of the part of PyFlink's API that a file of Python functions uses.

weir runs Python functions in the interpreter it embeds, without PyFlink or a JVM. A file written
for PyFlink imports `udf`, `ScalarFunction`, `FunctionContext`, `DataTypes` and `Row` from
`pyflink.table`, `pyflink.table.udf` or `pyflink.common`; weir registers this module under those
names before it imports the file, so the file runs unchanged. `udf(...)` returns a wrapper that
keeps what weir needs to call the function: the callable, its result type (as SQL text), its kind
(`general` or `pandas`) and whether it is deterministic.

The rest of PyFlink (TableEnvironment, DataStream) is PyFlink's own program API, which a script
run by weir does not need: importing those names fails with a message that says so.
"""

import inspect

# A package, so that `import pyflink.table.udf` finds its parts (all of them this module).
__path__ = []

__all__ = [
    "DataTypes", "DataType", "FunctionContext", "Row", "ScalarFunction", "TableFunction",
    "AggregateFunction", "udf", "udtf", "udaf",
]


class DataType:
    """A SQL type, as weir's parser reads it: `text` is Flink's SQL spelling."""

    def __init__(self, text, nullable=True):
        self.text = text
        self._nullable = nullable

    def not_null(self):
        return DataType(self.text, False)

    def nullable(self):
        return DataType(self.text, True)

    def sql(self):
        return self.text if self._nullable else self.text + " NOT NULL"

    def __repr__(self):
        return "DataType(%s)" % self.sql()

    def __eq__(self, other):
        return isinstance(other, DataType) and self.sql() == other.sql()

    def __hash__(self):
        return hash(self.sql())


class DataField:
    """One field of a ROW type."""

    def __init__(self, name, data_type, description=None):
        self.name = name
        self.data_type = data_type
        self.description = description


def _simple(text):
    def make(nullable=True):
        return DataType(text, nullable)
    make.__name__ = text
    return make


def _sized(name, default=None):
    def make(length=default, nullable=True):
        return DataType(name if length is None else "%s(%d)" % (name, length), nullable)
    make.__name__ = name
    return make


class DataTypes:
    """PyFlink's `DataTypes`: each method gives the SQL type of its name."""

    NULL = staticmethod(_simple("NULL"))
    BOOLEAN = staticmethod(_simple("BOOLEAN"))
    TINYINT = staticmethod(_simple("TINYINT"))
    SMALLINT = staticmethod(_simple("SMALLINT"))
    INT = staticmethod(_simple("INT"))
    BIGINT = staticmethod(_simple("BIGINT"))
    FLOAT = staticmethod(_simple("FLOAT"))
    DOUBLE = staticmethod(_simple("DOUBLE"))
    STRING = staticmethod(_simple("STRING"))
    BYTES = staticmethod(_simple("BYTES"))
    DATE = staticmethod(_simple("DATE"))
    CHAR = staticmethod(_sized("CHAR", 1))
    VARCHAR = staticmethod(_sized("VARCHAR", 2147483647))
    BINARY = staticmethod(_sized("BINARY", 1))
    VARBINARY = staticmethod(_sized("VARBINARY", 2147483647))
    TIME = staticmethod(_sized("TIME", 0))
    TIMESTAMP = staticmethod(_sized("TIMESTAMP", 6))
    TIMESTAMP_LTZ = staticmethod(_sized("TIMESTAMP_LTZ", 6))
    TIMESTAMP_WITH_LOCAL_TIME_ZONE = staticmethod(_sized("TIMESTAMP_LTZ", 6))

    @staticmethod
    def DECIMAL(precision=10, scale=0, nullable=True):
        return DataType("DECIMAL(%d, %d)" % (precision, scale), nullable)

    @staticmethod
    def ARRAY(element_type, nullable=True):
        return DataType("ARRAY<%s>" % element_type.sql(), nullable)

    @staticmethod
    def MAP(key_type, value_type, nullable=True):
        return DataType("MAP<%s, %s>" % (key_type.sql(), value_type.sql()), nullable)

    @staticmethod
    def MULTISET(element_type, nullable=True):
        return DataType("MULTISET<%s>" % element_type.sql(), nullable)

    @staticmethod
    def FIELD(name, data_type, description=None):
        return DataField(name, data_type, description)

    @staticmethod
    def ROW(row_fields=(), nullable=True):
        fields = ", ".join("`%s` %s" % (f.name.replace("`", "``"), f.data_type.sql()) for f in row_fields)
        return DataType("ROW<%s>" % fields, nullable)


class Row(list):
    """PyFlink's `Row`: fields that may have names (`Row(a=1)`, `Row(1, 2)`), read and set by
    position (`row[0] += 1`, as an aggregate function's accumulator is updated)."""

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError("Can not use both args and kwargs to create Row")
        if kwargs:
            super().__init__(kwargs.values())
            self._fields = list(kwargs.keys())
        else:
            super().__init__(args)
            self._fields = None

    def __hash__(self):
        return hash(tuple(self))

    def as_dict(self, recursive=False):
        if self._fields is None:
            raise TypeError("Cannot convert a Row class into dict")
        return dict(zip(self._fields, self))

    def __getattr__(self, item):
        if item.startswith("_"):
            raise AttributeError(item)
        fields = self.__dict__.get("_fields")
        if fields is None or item not in fields:
            raise AttributeError(item)
        return self[fields.index(item)]

    def __repr__(self):
        if self._fields is not None:
            return "Row(%s)" % ", ".join("%s=%r" % pair for pair in zip(self._fields, self))
        return "<Row(%s)>" % ", ".join(repr(v) for v in self)


class FunctionContext:
    """What `open` receives: the job parameters (`pipeline.global-job-parameters`)."""

    def __init__(self, job_parameters=None):
        self._job_parameters = dict(job_parameters or {})

    def get_job_parameter(self, key, default_value):
        return self._job_parameters.get(key, default_value)

    def get_metric_group(self):
        raise NotImplementedError("weir does not give Python functions a metric group")


class UserDefinedFunction:
    """The base class of functions written as classes: `open`, `close`, `is_deterministic`."""

    def open(self, function_context):
        pass

    def close(self):
        pass

    def is_deterministic(self):
        return True


class ScalarFunction(UserDefinedFunction):
    """A scalar function written as a class: weir calls its `eval` for each row."""


class TableFunction(UserDefinedFunction):
    """A table function written as a class: weir calls its `eval` for each row and joins the row
    with each row `eval` yields."""


class AggregateFunction(UserDefinedFunction):
    """An aggregate function written as a class: `create_accumulator`, `accumulate` (and
    `retract` for updating input), `get_value`; its types from `get_result_type` and
    `get_accumulator_type` unless `udaf` names them."""

    def create_accumulator(self):
        raise NotImplementedError("create_accumulator")

    def accumulate(self, accumulator, *args):
        raise NotImplementedError("accumulate")

    def get_value(self, accumulator):
        raise NotImplementedError("get_value")

    def get_result_type(self):
        return None

    def get_accumulator_type(self):
        return None


class UserDefinedFunctionWrapper:
    """What `udf`, `udtf` and `udaf` return: the function and what weir needs to call it."""

    def __init__(self, func, kind, input_types, result_type, func_type, deterministic, name):
        if result_type is None:
            raise TypeError("Invalid returnType: returnType should be DataType or str but is None")
        if func_type not in ("general", "pandas"):
            raise ValueError("The func_type must be one of 'general, pandas', got %s." % func_type)
        if isinstance(result_type, str):
            result_type = DataType(result_type)
        if not isinstance(result_type, DataType):
            raise TypeError("Invalid returnType: returnType should be DataType or str but is %s" % result_type)
        if isinstance(input_types, DataType):
            input_types = [input_types]
        self._func = func
        self._kind = kind
        self._input_types = [DataType(t) if isinstance(t, str) else t for t in (input_types or [])]
        self._result_type = result_type
        self._func_type = func_type
        if deterministic is None:
            deterministic = func.is_deterministic() if isinstance(func, UserDefinedFunction) else True
        self._deterministic = deterministic
        self._name = name or getattr(func, "__name__", type(func).__name__)

    def _callable(self):
        """The callable weir calls: `accumulate` of an aggregate function, `eval` of another
        function class, else the function itself."""
        if isinstance(self._func, AggregateFunction):
            return self._func.accumulate
        return self._func.eval if isinstance(self._func, UserDefinedFunction) else self._func

    def _arity(self):
        """(fewest, most) arguments the callable takes; most is None for `*args`."""
        if self._input_types:
            return len(self._input_types), len(self._input_types)
        try:
            parameters = inspect.signature(self._callable()).parameters.values()
        except (TypeError, ValueError):
            return 0, None
        positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        if self._kind == "aggregate":
            # `accumulate` takes the accumulator first.
            positional = positional[1:]
        required = sum(1 for p in positional if p.default is p.empty)
        if any(p.kind == p.VAR_POSITIONAL for p in parameters):
            return required, None
        return required, len(positional)

    def _open(self, job_parameters):
        if isinstance(self._func, UserDefinedFunction):
            self._func.open(FunctionContext(job_parameters))

    def _close(self):
        if isinstance(self._func, UserDefinedFunction):
            self._func.close()

    def __call__(self, *args):
        return self._callable()(*args)


def _decorate(kind, f, input_types, result_type, func_type, deterministic, name):
    def wrap(func):
        return UserDefinedFunctionWrapper(func, kind, input_types, result_type, func_type, deterministic, name)
    return wrap if f is None else wrap(f)


def udf(f=None, input_types=None, result_type=None, deterministic=None, name=None,
        func_type="general", udf_type=None):
    """PyFlink's `udf`: a scalar function, `general` (one row per call) or `pandas` (a batch of
    rows per call, as pandas.Series)."""
    return _decorate("scalar", f, input_types, result_type, udf_type or func_type, deterministic, name)


def udtf(f=None, input_types=None, result_types=None, deterministic=None, name=None):
    """PyFlink's `udtf`: a table function, whose rows have the columns `f0`, `f1`, … of
    `result_types` (one type or a list of them)."""
    if result_types is None:
        raise TypeError("Invalid result_types: result_types should be DataType or a list of them but is None")
    if not isinstance(result_types, (list, tuple)):
        result_types = [result_types]
    types = [DataType(t) if isinstance(t, str) else t for t in result_types]
    row = DataTypes.ROW([DataTypes.FIELD("f%d" % i, t) for i, t in enumerate(types)])
    return _decorate("table", f, input_types, row, "general", deterministic, name)


def _weir_table_rows(result):
    """The rows of what a table function returned, as PyFlink reads them: each item a row when
    it is a tuple, a list or a Row, else the one column of a row; nothing for None. Lazy: a
    generator is run only as far as its rows are asked for."""
    if result is None:
        return iter(())
    return (item if isinstance(item, (tuple, list)) else (item,) for item in result)


def udaf(f=None, input_types=None, result_type=None, accumulator_type=None, deterministic=None,
         name=None, func_type="general"):
    """PyFlink's `udaf`: an aggregate function (an `AggregateFunction`), its result and
    accumulator types given here or by its `get_result_type` and `get_accumulator_type`."""
    def wrap(func):
        if func_type == "general" and not isinstance(func, AggregateFunction):
            raise TypeError(
                "Invalid function: not a function or callable (__call__ is not defined): %s" % type(func))
        result = result_type
        accumulator = accumulator_type
        if isinstance(func, AggregateFunction):
            result = result if result is not None else func.get_result_type()
            accumulator = accumulator if accumulator is not None else func.get_accumulator_type()
        if result is None:
            raise TypeError("Invalid returnType: returnType should be DataType but is None")
        if func_type == "general" and accumulator is None:
            raise TypeError("Invalid accumulator_type: accumulator_type should be DataType but is None")
        wrapper = UserDefinedFunctionWrapper(func, "aggregate", input_types, result, func_type, deterministic, name)
        wrapper._accumulator_type = DataType(accumulator) if isinstance(accumulator, str) else accumulator
        return wrapper
    return wrap if f is None else wrap(f)


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    raise ImportError(
        "weir runs the Python functions of a PyFlink file but not PyFlink's program API: "
        "'%s' is not available inside weir (udf, udtf, udaf, ScalarFunction, FunctionContext, "
        "DataTypes and Row are)" % name)


def _weir_unscaled(value, scale, precision):
    """The unscaled integer of `value` rounded half up to `scale` digits, as PyFlink's coder
    rounds a DECIMAL result; None when it needs more than `precision` digits."""
    import decimal
    context = decimal.Context(prec=max(precision, 1) + 40, rounding=decimal.ROUND_HALF_UP)
    if isinstance(value, float):
        value = decimal.Decimal(repr(value))
    elif not isinstance(value, decimal.Decimal):
        value = decimal.Decimal(value)
    rounded = value.quantize(decimal.Decimal(1).scaleb(-scale), context=context)
    unscaled = int(rounded.scaleb(scale, context=context))
    return None if abs(unscaled) >= 10 ** precision else unscaled


def _weir_call_pandas(func, name, arrays, result_type):
    """Calls a pandas function on one batch: each Arrow array as a pandas.Series, the result
    back as an Arrow array of `result_type` (PyFlink's conversion both ways)."""
    import pandas as pd
    import pyarrow as pa
    length = len(arrays[0]) if arrays else 1
    series = [a.to_pandas(date_as_object=True) for a in arrays]
    result = func(*series)
    if not isinstance(result, (pd.Series, pd.DataFrame)):
        raise TypeError(
            "The result type of Pandas UDF '%s' must be pandas.Series or pandas.DataFrame, got %s"
            % (name, type(result)))
    if len(result) != length:
        raise RuntimeError(
            "The result length '%d' of Pandas UDF '%s' is not equal to the input length '%d'"
            % (len(result), name, length))
    return pa.Array.from_pandas(result, mask=result.isnull(), type=result_type)


def _weir_guard_exit():
    """Python functions run inside weir's own process, where `os._exit` would end weir with every
    job and the shell, without a word. In weir's process it raises instead, failing the job that
    called it with a message; a child process forked by a function exits as it asked."""
    import os
    real_exit = os._exit
    weir_pid = os.getpid()

    def _exit(status):
        if os.getpid() != weir_pid:
            real_exit(status)
        raise SystemExit(
            "os._exit(%r) was called inside a Python function: weir runs Python functions in its own "
            "process, which that would end with every job; the job fails instead" % (status,))

    os._exit = _exit


_weir_guard_exit()
