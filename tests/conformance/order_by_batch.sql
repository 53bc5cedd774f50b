-- [ordered] Batch ORDER BY with and without LIMIT (Flink's Sort and SortLimit): rows in order, NULLs first ascending, OFFSET, a key not selected.
SET 'execution.runtime-mode' = 'batch';
CREATE TABLE orders (id BIGINT, user_id INT, product STRING, amount DECIMAL(10, 2), qty INT, ts TIMESTAMP(3))
WITH ('connector' = 'filesystem', 'path' = 'data/orders.csv', 'format' = 'csv');
CREATE TABLE sorted (id BIGINT, product STRING, amount DECIMAL(10, 2))
WITH ('connector' = 'print', 'print-identifier' = 'sorted', 'sink.parallelism' = '1');
CREATE TABLE top (product STRING, amount DECIMAL(10, 2), qty INT)
WITH ('connector' = 'print', 'print-identifier' = 'top', 'sink.parallelism' = '1');
CREATE TABLE paged (id BIGINT, ts TIMESTAMP(3))
WITH ('connector' = 'print', 'print-identifier' = 'paged', 'sink.parallelism' = '1');
CREATE TABLE totals (product STRING, total DECIMAL(38, 2))
WITH ('connector' = 'print', 'print-identifier' = 'totals', 'sink.parallelism' = '1');
INSERT INTO sorted SELECT id, product, amount FROM orders WHERE user_id < 5 ORDER BY product DESC, amount, id;
INSERT INTO top SELECT product, amount, qty FROM orders ORDER BY amount DESC, id LIMIT 7;
INSERT INTO paged SELECT id, ts FROM orders ORDER BY qty, ts DESC, id LIMIT 5 OFFSET 10;
INSERT INTO totals SELECT product, SUM(amount) AS total FROM orders GROUP BY product ORDER BY total DESC LIMIT 4;
