CREATE TABLE clicks (user_id INT, url STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = 'data/clicks.csv', 'format' = 'csv');
EXPLAIN SELECT user_id, url, window_start, window_end FROM TABLE(SESSION(TABLE clicks PARTITION BY user_id, DESCRIPTOR(ts), INTERVAL '3' SECOND));
