-- A pandas function from a PyFlink file (examples/python_udfs.py), called from SQL: weir hands it
-- a batch of rows at a time as pandas.Series, through Arrow. It needs an interpreter with
-- pandas and pyarrow, of the Python version weir embeds; scripts/ensure-pyarrow makes one (a
-- virtual environment under ~/.cache/weir-tools) and prints its path. Run it with:
--   cargo run --bin weir -- run examples/pandas_udf.sql -pyexec "$(scripts/ensure-pyarrow)"
SET 'python.files' = 'examples/python_udfs.py';

CREATE TEMPORARY FUNCTION order_total AS 'python_udfs.order_total' LANGUAGE PYTHON;

CREATE TABLE orders (product INT, quantity INT, unit_price DOUBLE) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '20',
  'fields.product.min' = '1',
  'fields.product.max' = '3',
  'fields.quantity.min' = '1',
  'fields.quantity.max' = '5',
  'fields.unit_price.min' = '1',
  'fields.unit_price.max' = '10'
);

SELECT product, COUNT(*) AS orders, ROUND(SUM(order_total(quantity, unit_price)), 2) AS revenue
FROM orders GROUP BY product;
