-- GROUPING SETS, ROLLUP and CUBE in batch mode: final rows only; a plain key combined with ROLLUP, and a key summed.
SET 'execution.runtime-mode' = 'batch';
CREATE TABLE orders (id BIGINT, user_id INT, product STRING, amount DECIMAL(10, 2), qty INT, ts TIMESTAMP(3))
WITH ('connector' = 'filesystem', 'path' = 'data/orders.csv', 'format' = 'csv');
CREATE TABLE rollup_out (qty INT, product STRING, total DECIMAL(38, 2), qty_sum INT, g BIGINT)
WITH ('connector' = 'print', 'print-identifier' = 'rollup');
CREATE TABLE cube_out (product STRING, qty INT, cnt BIGINT, avg_amount DECIMAL(38, 6))
WITH ('connector' = 'print', 'print-identifier' = 'cube');
INSERT INTO rollup_out
SELECT qty, product, SUM(amount), SUM(qty), GROUPING_ID(qty, product) FROM orders GROUP BY qty, ROLLUP (product);
INSERT INTO cube_out
SELECT product, qty, COUNT(*), AVG(amount) FROM orders WHERE qty > 5 GROUP BY CUBE (product, qty);
