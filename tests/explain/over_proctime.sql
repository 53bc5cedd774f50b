CREATE TABLE orders (id BIGINT, user_id INT, product STRING, amount DECIMAL(10, 2), qty INT, ts TIMESTAMP(3), proc AS PROCTIME(), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH ('connector' = 'filesystem', 'path' = 'data/orders.csv', 'format' = 'csv');
CREATE TABLE payments (order_id BIGINT, pay_method STRING, paid DECIMAL(10, 2), ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH ('connector' = 'filesystem', 'path' = 'data/payments.csv', 'format' = 'csv');
CREATE TABLE agg_sink (user_id INT, cnt BIGINT, total DECIMAL(38, 2), PRIMARY KEY (user_id) NOT ENFORCED) WITH ('connector' = 'blackhole');
CREATE TABLE wsink (window_start TIMESTAMP(3), window_end TIMESTAMP(3), cnt BIGINT) WITH ('connector' = 'blackhole');
EXPLAIN SELECT id, COUNT(*) OVER (PARTITION BY user_id ORDER BY proc ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM orders;
