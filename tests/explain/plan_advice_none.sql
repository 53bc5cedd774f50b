CREATE TABLE orders (id BIGINT, user_id INT, product STRING, amount DECIMAL(10, 2), qty INT, ts TIMESTAMP(3), proc AS PROCTIME(), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH ('connector' = 'filesystem', 'path' = 'data/orders.csv', 'format' = 'csv');
EXPLAIN PLAN_ADVICE SELECT id, product FROM orders WHERE qty > 3;
