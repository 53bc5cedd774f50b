CREATE TABLE orders (id BIGINT, user_id INT, product STRING, amount DECIMAL(10, 2), qty INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '3' SECOND) WITH ('connector' = 'filesystem', 'path' = 'data/orders.csv', 'format' = 'csv');
CREATE TABLE payments (order_id BIGINT, pay_method STRING, paid DECIMAL(10, 2), ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH ('connector' = 'filesystem', 'path' = 'data/payments.csv', 'format' = 'csv');
SET 'table.exec.mini-batch.enabled' = 'true';
SET 'table.exec.mini-batch.allow-latency' = '1 s';
SET 'table.exec.mini-batch.size' = '100';
CREATE TABLE s (product STRING, n BIGINT) WITH ('connector' = 'blackhole');
EXPLAIN INSERT INTO s SELECT product, MAX(n) FROM (SELECT window_start, window_end, product, COUNT(*) AS n FROM TABLE(HOP(TABLE orders, DESCRIPTOR(ts), INTERVAL '15' SECOND, INTERVAL '45' SECOND)) GROUP BY window_start, window_end, window_time, product) GROUP BY product;
