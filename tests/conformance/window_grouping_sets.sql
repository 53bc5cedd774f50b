-- GROUPING SETS, ROLLUP and CUBE in window TVF aggregates: an Expand below the window aggregate; late rows dropped as in any window.
CREATE TABLE orders (id BIGINT, user_id INT, product STRING, amount DECIMAL(10, 2), qty INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = 'data/orders.csv', 'format' = 'csv');
CREATE TABLE tumble_out (window_start TIMESTAMP(3), window_end TIMESTAMP(3), product STRING, total DECIMAL(38, 2), cnt BIGINT, g BIGINT)
WITH ('connector' = 'print', 'print-identifier' = 'tumble');
CREATE TABLE hop_out (window_end TIMESTAMP(3), product STRING, qty INT, max_amount DECIMAL(10, 2), gid BIGINT)
WITH ('connector' = 'print', 'print-identifier' = 'hop');
EXECUTE STATEMENT SET BEGIN
INSERT INTO tumble_out
SELECT window_start, window_end, product, SUM(amount), COUNT(*), GROUPING(product)
FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '10' SECOND))
GROUP BY window_start, window_end, GROUPING SETS ((product), ());
INSERT INTO hop_out
SELECT window_end, product, qty, MAX(amount), GROUPING_ID(product, qty)
FROM TABLE(HOP(TABLE orders, DESCRIPTOR(ts), INTERVAL '10' SECOND, INTERVAL '30' SECOND))
WHERE qty < 4 GROUP BY window_start, window_end, CUBE (product, qty);
END;
