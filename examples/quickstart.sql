-- weir quickstart: generate 20 orders, count and sum them per product, print the changelog.
-- Run it with: cargo run --bin weir -- run examples/quickstart.sql
CREATE TABLE orders (product INT, amount DECIMAL(10, 2)) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '20',
  'rows-per-second' = '1000',
  'fields.product.min' = '1',
  'fields.product.max' = '3',
  'fields.amount.min' = '1',
  'fields.amount.max' = '100'
);

CREATE TABLE per_product (product INT, orders BIGINT, revenue DECIMAL(38, 2), PRIMARY KEY (product) NOT ENFORCED)
WITH ('connector' = 'print', 'print-identifier' = 'per_product');

INSERT INTO per_product
SELECT product, COUNT(*), SUM(amount) FROM orders GROUP BY product;
