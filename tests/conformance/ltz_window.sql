-- Windows over a TIMESTAMP_LTZ rowtime follow table.local-time-zone: New York's wall clock, across both changes of its clocks in 2024.
SET 'table.local-time-zone' = 'America/New_York';
CREATE TABLE ev (id BIGINT, k INT, ms BIGINT, ts AS TO_TIMESTAMP_LTZ(ms, 3), WATERMARK FOR ts AS ts - INTERVAL '10' MINUTE)
WITH ('connector' = 'filesystem', 'path' = 'data/ltz_events.csv', 'format' = 'csv');
CREATE TABLE tumbled (k INT, window_start TIMESTAMP(3), window_end TIMESTAMP(3), window_time TIMESTAMP_LTZ(3), n BIGINT) WITH ('connector' = 'print', 'print-identifier' = 'tumble');
CREATE TABLE hopped (window_start TIMESTAMP(3), window_end TIMESTAMP(3), n BIGINT, s BIGINT) WITH ('connector' = 'print', 'print-identifier' = 'hop');
CREATE TABLE cumulated (k INT, window_start TIMESTAMP(3), window_end TIMESTAMP(3), n BIGINT) WITH ('connector' = 'print', 'print-identifier' = 'cumulate');
CREATE TABLE legacy (k INT, s TIMESTAMP(3), e TIMESTAMP(3), n BIGINT) WITH ('connector' = 'print', 'print-identifier' = 'legacy');
CREATE TABLE firsts (window_start TIMESTAMP(3), window_end TIMESTAMP(3), k INT, id BIGINT) WITH ('connector' = 'print', 'print-identifier' = 'first');
EXECUTE STATEMENT SET BEGIN
INSERT INTO tumbled SELECT k, window_start, window_end, window_time, COUNT(*)
  FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '30' MINUTE)) GROUP BY k, window_start, window_end, window_time;
INSERT INTO hopped SELECT window_start, window_end, COUNT(*), SUM(id)
  FROM TABLE(HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '30' MINUTE, INTERVAL '2' HOUR)) GROUP BY window_start, window_end;
INSERT INTO cumulated SELECT k, window_start, window_end, COUNT(*)
  FROM TABLE(CUMULATE(TABLE ev, DESCRIPTOR(ts), INTERVAL '15' MINUTE, INTERVAL '1' HOUR)) GROUP BY k, window_start, window_end;
INSERT INTO legacy SELECT k, TUMBLE_START(ts, INTERVAL '1' HOUR), TUMBLE_END(ts, INTERVAL '1' HOUR), COUNT(*)
  FROM ev GROUP BY TUMBLE(ts, INTERVAL '1' HOUR), k;
INSERT INTO firsts SELECT window_start, window_end, k, id FROM (
  SELECT window_start, window_end, k, id, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, k ORDER BY ts) AS rn
  FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' HOUR))) WHERE rn = 1;
END;
