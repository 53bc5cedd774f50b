CREATE TABLE orders (id BIGINT, user_id INT, product STRING, amount DECIMAL(10, 2), qty INT, ts TIMESTAMP(3), proc AS PROCTIME(), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH ('connector' = 'filesystem', 'path' = 'data/orders.csv', 'format' = 'csv');
SET 'table.exec.mini-batch.enabled' = 'true';
SET 'table.exec.mini-batch.allow-latency' = '2s';
SET 'table.exec.mini-batch.size' = '5000';
CREATE TABLE filtered_sink (user_id INT, products BIGINT, cheap_products BIGINT, dear_products BIGINT, cheap_total DECIMAL(38, 2), big_quantities BIGINT, PRIMARY KEY (user_id) NOT ENFORCED) WITH ('connector' = 'blackhole');
EXPLAIN CHANGELOG_MODE INSERT INTO filtered_sink SELECT user_id, COUNT(DISTINCT product), COUNT(DISTINCT product) FILTER (WHERE amount < 10), COUNT(DISTINCT product) FILTER (WHERE amount >= 10), SUM(DISTINCT amount) FILTER (WHERE amount < 10), COUNT(DISTINCT qty) FILTER (WHERE qty > 2) FROM orders GROUP BY user_id;
