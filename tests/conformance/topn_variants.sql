-- Top-N variants: a rank range not starting at 1, ORDER BY … LIMIT, LIMIT alone, and deduplication on event time (last and first row).
CREATE TABLE orders (id BIGINT, user_id INT, product STRING, amount DECIMAL(10, 2), qty INT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '60' SECOND)
WITH ('connector' = 'filesystem', 'path' = 'data/orders.csv', 'format' = 'csv');
CREATE TABLE middle (product STRING, qty INT, id BIGINT, r BIGINT) WITH ('connector' = 'print', 'print-identifier' = 'middle');
CREATE TABLE biggest (id BIGINT, amount DECIMAL(10, 2)) WITH ('connector' = 'print', 'print-identifier' = 'biggest');
CREATE TABLE firsts (id BIGINT, product STRING) WITH ('connector' = 'print', 'print-identifier' = 'limit');
CREATE TABLE latest (product STRING, id BIGINT, ts TIMESTAMP(3)) WITH ('connector' = 'print', 'print-identifier' = 'latest');
CREATE TABLE earliest (user_id INT, id BIGINT, ts TIMESTAMP(3)) WITH ('connector' = 'print', 'print-identifier' = 'earliest');
EXECUTE STATEMENT SET BEGIN
INSERT INTO middle SELECT product, qty, id, r FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY product ORDER BY qty DESC, id ASC) AS r FROM orders) WHERE r BETWEEN 2 AND 3;
INSERT INTO biggest SELECT id, amount FROM orders ORDER BY amount DESC LIMIT 5;
INSERT INTO firsts SELECT id, product FROM orders LIMIT 4;
INSERT INTO latest SELECT product, id, ts FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY product ORDER BY ts DESC) AS rn FROM orders) WHERE rn = 1;
INSERT INTO earliest SELECT user_id, id, ts FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY ts ASC) AS rn FROM orders) WHERE rn = 1;
END;
