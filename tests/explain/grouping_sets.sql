CREATE TABLE orders (id BIGINT, user_id INT, product STRING, amount DECIMAL(10, 2), qty INT, ts TIMESTAMP(3)) WITH ('connector' = 'filesystem', 'path' = 'data/orders.csv', 'format' = 'csv');
EXPLAIN SELECT user_id, product, SUM(amount) AS total, COUNT(*) AS cnt, GROUPING_ID(user_id, product) AS gid FROM orders GROUP BY ROLLUP (user_id, product) HAVING GROUPING(product) = 1 OR SUM(amount) > 100;
