"""An independent reader and writer of Parquet for weir's tests, with pyarrow.

read DIR: prints the Parquet schema of the first data file below DIR (files whose names start
  with '.' or '_' are not data, as for Flink and Hive), then every row of every data file, one
  per line, sorted, each value written as `show` writes it, with the partition columns (`k=v`
  directories) last.
write FILE: writes the rows of `ROWS` below into FILE, with pyarrow's own type choices and
  INT96 timestamps, as Hive and Spark write them.
"""

import datetime
import decimal
import os
import sys

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq


def show(value):
    """A value as text: NULL, numbers and text as Python writes them, bytes in hex, lists in
    brackets, maps as {k=v, ...}, rows in parentheses."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, bytes):
        return "x'" + value.hex() + "'"
    if isinstance(value, datetime.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, (datetime.date, datetime.time, decimal.Decimal)):
        return str(value)
    if isinstance(value, list) and value and isinstance(value[0], tuple):
        return "{" + ", ".join(show(k) + "=" + show(v) for k, v in value) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(show(v) for v in value) + "]"
    if isinstance(value, dict):
        return "(" + ", ".join(show(v) for v in value.values()) + ")"
    return str(value)


def data_files(root):
    files = []
    for directory, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
        files += [os.path.join(directory, n) for n in sorted(names) if not n.startswith((".", "_"))]
    return files


def read(root):
    files = data_files(root)
    print(pq.ParquetFile(files[0]).schema)
    rows = []
    for path in files:
        partition = [part.split("=", 1)[1] for part in os.path.relpath(os.path.dirname(path), root).split(os.sep) if "=" in part]
        table = pq.read_table(path)
        # Timestamps as pyarrow writes them (Python's datetime holds no nanoseconds).
        for i, field in enumerate(table.schema):
            if pa.types.is_timestamp(field.type):
                table = table.set_column(i, field.name, pc.cast(table.column(i), pa.string()))
        for row in table.to_pylist():
            rows.append(", ".join([show(v) for v in row.values()] + partition))
    for row in sorted(rows):
        print(row)


ROWS = {
    "id": pa.array([1, 2, None], pa.int32()),
    "big": pa.array([10**12, -5, None], pa.int64()),
    "name": pa.array(["ada", "", None], pa.string()),
    "price": pa.array([decimal.Decimal("12.34"), decimal.Decimal("-0.01"), None], pa.decimal128(10, 2)),
    "day": pa.array([datetime.date(2024, 2, 29), datetime.date(1969, 12, 31), None], pa.date32()),
    "ts": pa.array([datetime.datetime(2024, 1, 2, 3, 4, 5, 678000), datetime.datetime(1960, 1, 1), None], pa.timestamp("us")),
    "tags": pa.array([[1, 2], [], None], pa.list_(pa.int32())),
    "attrs": pa.array([[("a", 1)], [], None], pa.map_(pa.string(), pa.int32())),
    "point": pa.array([{"x": 1.5, "y": "p"}, {"x": None, "y": None}, None], pa.struct([("x", pa.float64()), ("y", pa.string())])),
}


def write(path):
    pq.write_table(pa.table(ROWS), path, use_deprecated_int96_timestamps=True)


if __name__ == "__main__":
    {"read": read, "write": write}[sys.argv[1]](sys.argv[2])
