-- GROUPING SETS, ROLLUP and CUBE over an append-only source (Expand + GroupAggregate), with GROUPING(), GROUPING_ID(), HAVING on them, a key also summed, and DISTINCT.
CREATE TABLE orders (id BIGINT, user_id INT, product STRING, amount DECIMAL(10, 2), qty INT, ts TIMESTAMP(3))
WITH ('connector' = 'filesystem', 'path' = 'data/orders.csv', 'format' = 'csv');
CREATE TABLE rollup_out (product STRING, qty INT, total DECIMAL(38, 2), cnt BIGINT, g_product BIGINT, g_id BIGINT)
WITH ('connector' = 'print', 'print-identifier' = 'rollup');
CREATE TABLE cube_out (product STRING, user_bucket INT, qty_sum INT, users BIGINT, gid BIGINT)
WITH ('connector' = 'print', 'print-identifier' = 'cube');
CREATE TABLE sets_out (product STRING, qty INT, max_amount DECIMAL(10, 2), cnt BIGINT)
WITH ('connector' = 'print', 'print-identifier' = 'sets');
CREATE TABLE having_out (product STRING, total DECIMAL(38, 2), g BIGINT)
WITH ('connector' = 'print', 'print-identifier' = 'having');
EXECUTE STATEMENT SET BEGIN
INSERT INTO rollup_out
SELECT product, qty, SUM(amount), COUNT(*), GROUPING(product), GROUPING_ID(product, qty)
FROM orders WHERE qty <= 3 GROUP BY ROLLUP (product, qty);
INSERT INTO cube_out
SELECT product, user_id % 3, SUM(qty), COUNT(DISTINCT user_id), GROUPING_ID(user_id % 3, product)
FROM orders GROUP BY CUBE (product, user_id % 3);
INSERT INTO sets_out
SELECT product, qty, MAX(amount), COUNT(qty) FROM orders WHERE id <= 500
GROUP BY GROUPING SETS ((product, qty), (qty), ());
INSERT INTO having_out
SELECT product, SUM(amount), GROUPING(product) FROM orders
GROUP BY GROUPING SETS ((product), ()) HAVING GROUPING(product) = 1 OR SUM(amount) > 20000;
END;
