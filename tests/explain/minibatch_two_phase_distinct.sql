CREATE TABLE orders (id BIGINT, user_id INT, product STRING, amount DECIMAL(10, 2), qty INT, ts TIMESTAMP(3), proc AS PROCTIME(), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH ('connector' = 'filesystem', 'path' = 'data/orders.csv', 'format' = 'csv');
CREATE TABLE agg_sink (user_id INT, cnt BIGINT, products BIGINT, total DECIMAL(38, 2), PRIMARY KEY (user_id) NOT ENFORCED) WITH ('connector' = 'blackhole');
SET 'table.exec.mini-batch.enabled' = 'true';
SET 'table.exec.mini-batch.allow-latency' = '2s';
SET 'table.exec.mini-batch.size' = '5000';
EXPLAIN CHANGELOG_MODE INSERT INTO agg_sink SELECT user_id, COUNT(*), COUNT(DISTINCT product), SUM(DISTINCT amount) FROM orders GROUP BY user_id;
