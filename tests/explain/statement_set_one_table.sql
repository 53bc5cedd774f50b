CREATE TABLE src (k INT, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'datagen', 'number-of-rows' = '10');
CREATE TABLE out_t (k INT, v INT) WITH ('connector' = 'blackhole');
EXPLAIN STATEMENT SET BEGIN
INSERT INTO out_t SELECT k, v FROM src WHERE v > 10;
INSERT INTO out_t SELECT k, v + 1 FROM src WHERE v < 5;
END;
