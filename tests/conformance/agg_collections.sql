-- Collection and JSON aggregates: COLLECT, ARRAY_AGG (RESPECT and IGNORE NULLS), JSON_ARRAYAGG
-- (ABSENT and NULL ON NULL) and JSON_OBJECTAGG over inserts, and over the updates of an inner
-- aggregate (retractions), with FIRST_VALUE and LAST_VALUE.
CREATE TABLE orders (id BIGINT, user_id INT, product STRING, amount DECIMAL(10, 2), qty INT, ts TIMESTAMP(3))
WITH ('connector' = 'filesystem', 'path' = 'data/orders.csv', 'format' = 'csv');
CREATE TABLE by_product (product STRING, qtys MULTISET<INT>, small ARRAY<INT>, small_only ARRAY<INT>, ja STRING, jn STRING,
  PRIMARY KEY (product) NOT ENFORCED)
WITH ('connector' = 'print', 'print-identifier' = 'products');
CREATE TABLE by_count (cnt BIGINT, jo STRING, joa STRING, PRIMARY KEY (cnt) NOT ENFORCED)
WITH ('connector' = 'print', 'print-identifier' = 'counts');
CREATE TABLE by_user (user_id INT, first_max INT, last_max INT, maxes ARRAY<INT>, PRIMARY KEY (user_id) NOT ENFORCED)
WITH ('connector' = 'print', 'print-identifier' = 'users');
EXECUTE STATEMENT SET BEGIN
INSERT INTO by_product
SELECT product, COLLECT(qty), ARRAY_AGG(CASE WHEN qty < 4 THEN qty END), ARRAY_AGG(CASE WHEN qty < 4 THEN qty END IGNORE NULLS),
  JSON_ARRAYAGG(CASE WHEN qty < 4 THEN qty END), JSON_ARRAYAGG(CASE WHEN qty < 4 THEN qty END NULL ON NULL)
FROM orders WHERE id <= 40 GROUP BY product;
INSERT INTO by_count
SELECT cnt, JSON_OBJECTAGG(KEY CAST(user_id AS STRING) VALUE CASE WHEN cnt > 1 THEN amount END),
  JSON_OBJECTAGG(KEY CAST(user_id AS STRING) VALUE CASE WHEN cnt > 1 THEN amount END ABSENT ON NULL)
FROM (SELECT user_id, COUNT(*) AS cnt, MAX(amount) AS amount FROM orders WHERE id <= 120 GROUP BY user_id) GROUP BY cnt;
INSERT INTO by_user
SELECT user_id, FIRST_VALUE(m), LAST_VALUE(m), ARRAY_AGG(m)
FROM (SELECT user_id, MAX(qty) AS m FROM orders WHERE id <= 200 GROUP BY user_id) GROUP BY user_id;
END;
