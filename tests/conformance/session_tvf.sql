-- The SESSION window table function on its own: each row with its session's bounds, once the session closes.
CREATE TABLE clicks (user_id INT, url STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = 'data/clicks.csv', 'format' = 'csv');
CREATE TABLE out_s (user_id INT, url STRING, ts TIMESTAMP(3), window_start TIMESTAMP(3), window_end TIMESTAMP(3), window_time TIMESTAMP(3))
WITH ('connector' = 'print', 'print-identifier' = 'sess');
INSERT INTO out_s SELECT user_id, url, CAST(ts AS TIMESTAMP(3)), window_start, window_end, window_time FROM TABLE(SESSION(TABLE clicks PARTITION BY user_id, DESCRIPTOR(ts), INTERVAL '3' SECOND));
