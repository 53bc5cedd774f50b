-- Python functions from a PyFlink file (examples/python_udfs.py), called from SQL.
-- Run it with: cargo run --bin weir -- run examples/python_udf.sql
-- (A pandas function, `@udf(..., func_type="pandas")`, also needs pandas and pyarrow in the
-- interpreter `python.executable` names: examples/pandas_udf.sql calls one.)
SET 'python.files' = 'examples/python_udfs.py';
SET 'pipeline.global-job-parameters' = 'tax-rate:0.1';

CREATE TEMPORARY FUNCTION size_class AS 'python_udfs.size_class' LANGUAGE PYTHON;
CREATE TEMPORARY FUNCTION with_tax AS 'python_udfs.with_tax' LANGUAGE PYTHON;

CREATE TABLE orders (product INT, amount DECIMAL(10, 2)) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '20',
  'fields.product.min' = '1',
  'fields.product.max' = '3',
  'fields.amount.min' = '1',
  'fields.amount.max' = '100'
);

SELECT size_class(amount) AS size, COUNT(*) AS orders, ROUND(SUM(with_tax(amount)), 2) AS with_tax
FROM orders GROUP BY size_class(amount);
