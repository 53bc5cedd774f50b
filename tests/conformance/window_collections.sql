-- Order-keeping and collection aggregates in HOP and CUMULATE windows, whose slices merge: the
-- values of a HOP window's later slice come first, a CUMULATE window's in slice order.
CREATE TABLE orders (id BIGINT, user_id INT, product STRING, amount DECIMAL(10, 2), qty INT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND)
WITH ('connector' = 'filesystem', 'path' = 'data/orders.csv', 'format' = 'csv');
CREATE TABLE hops (product STRING, window_start TIMESTAMP(3), window_end TIMESTAMP(3), ids STRING, qtys ARRAY<INT>, n MULTISET<INT>, jo STRING)
WITH ('connector' = 'print', 'print-identifier' = 'hop');
CREATE TABLE cumulates (product STRING, window_start TIMESTAMP(3), window_end TIMESTAMP(3), ids STRING, qtys ARRAY<INT>)
WITH ('connector' = 'print', 'print-identifier' = 'cumulate');
EXECUTE STATEMENT SET BEGIN
INSERT INTO hops
SELECT product, window_start, window_end, LISTAGG(CAST(id AS STRING)), ARRAY_AGG(qty), COLLECT(qty),
  JSON_OBJECTAGG(KEY CAST(id AS STRING) VALUE amount)
FROM TABLE(HOP(TABLE orders, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '6' SECOND))
WHERE id <= 60 GROUP BY product, window_start, window_end;
INSERT INTO cumulates
SELECT product, window_start, window_end, LISTAGG(CAST(id AS STRING), ';'), ARRAY_AGG(qty)
FROM TABLE(CUMULATE(TABLE orders, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '6' SECOND))
WHERE id <= 60 GROUP BY product, window_start, window_end;
END;
