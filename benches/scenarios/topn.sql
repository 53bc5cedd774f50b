-- Top-N: the 3 largest of 5,000,000 generated orders per product (10,000 products), a Rank of the AppendFastStrategy keeping 3 rows per product.
CREATE TABLE orders (product INT, amount BIGINT, id BIGINT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '5000000', 'rows-per-second' = '1000000000',
  'fields.product.min' = '1', 'fields.product.max' = '10000', 'fields.amount.min' = '0', 'fields.amount.max' = '1000000');
CREATE TABLE snk (product INT, rn BIGINT, id BIGINT, amount BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO snk SELECT product, rn, id, amount FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY product ORDER BY amount DESC) AS rn FROM orders) WHERE rn <= 3;
