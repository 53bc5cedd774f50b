CREATE TABLE orders (id BIGINT, user_id INT, product STRING, amount DECIMAL(10, 2), qty INT, ts TIMESTAMP(3), proc AS PROCTIME(), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH ('connector' = 'filesystem', 'path' = 'data/orders.csv', 'format' = 'csv');
SET 'table.exec.mini-batch.enabled' = 'true';
SET 'table.exec.mini-batch.allow-latency' = '2s';
SET 'table.exec.mini-batch.size' = '5000';
EXPLAIN SELECT user_id, AVG(qty), SUM(amount), COUNT(qty), SUM(DISTINCT qty), MAX(amount), COUNT(*) FROM orders GROUP BY user_id;
