SET 'table.exec.mini-batch.enabled' = 'true';
SET 'table.exec.mini-batch.allow-latency' = '1 s';
SET 'table.exec.mini-batch.size' = '1000';
CREATE TABLE orders (id BIGINT, user_id INT, product STRING, amount DECIMAL(10, 2), qty INT, ts TIMESTAMP(3)) WITH ('connector' = 'filesystem', 'path' = 'data/orders.csv', 'format' = 'csv');
EXPLAIN SELECT user_id, product, MAX(amount) AS top, COUNT(*) AS cnt, GROUPING(user_id) AS g FROM orders GROUP BY CUBE (user_id, product);
