CREATE TABLE orders (id BIGINT, user_id INT, product STRING, amount DECIMAL(10, 2), qty INT, ts TIMESTAMP(3), proc AS PROCTIME(), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH ('connector' = 'filesystem', 'path' = 'data/orders.csv', 'format' = 'csv');
CREATE TABLE payments (order_id BIGINT, pay_method STRING, paid DECIMAL(10, 2), ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH ('connector' = 'filesystem', 'path' = 'data/payments.csv', 'format' = 'csv');
EXPLAIN PLAN_ADVICE SELECT user_id, COUNT(*), SUM(amount) FROM orders GROUP BY user_id;
