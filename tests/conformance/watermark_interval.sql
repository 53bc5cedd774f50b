-- Watermarks go out as Flink's WatermarkAssigner sends them: after a row that moves the
-- watermark on by more than pipeline.auto-watermark-interval (200 ms) since the last one sent
-- (and every 200 ms of processing time otherwise). 10:00:01.050 moves it on by 150 ms only, so
-- 10:00:00.950 after it is not late for the window ending at 10:00:01; 10:00:03.000 moves it on
-- by 1.5 s, so 10:00:02.990 after it is late for the window ending at 10:00:03.
CREATE TABLE ev (ts TIMESTAMP(3), v INT, WATERMARK FOR ts AS ts)
WITH ('connector' = 'filesystem', 'path' = 'data/watermark_interval.csv', 'format' = 'csv');
CREATE TABLE counts (window_start TIMESTAMP(3), window_end TIMESTAMP(3), n BIGINT, total INT)
WITH ('connector' = 'print', 'print-identifier' = 'w');
INSERT INTO counts
SELECT window_start, window_end, COUNT(*), SUM(v)
FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' SECOND))
GROUP BY window_start, window_end;
