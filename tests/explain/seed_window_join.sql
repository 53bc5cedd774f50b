-- The first source document's window join example (its SET of table.optimizer.window-join-enabled
-- is given on the command line).
CREATE TEMPORARY TABLE LeftTable (
  id VARCHAR,
  row_time TIMESTAMP_LTZ(3),
  num INT,
  WATERMARK FOR row_time as row_time - INTERVAL '5' SECONDS
) WITH (
  'connector'='datagen'
);
CREATE TEMPORARY TABLE RightTable (
  id VARCHAR,
  row_time TIMESTAMP_LTZ(3),
  num INT,
  WATERMARK FOR row_time as row_time - INTERVAL '10' SECONDS
) WITH (
  'connector'='datagen'
);
EXPLAIN
SELECT L.num as L_Num, L.id as L_Id, R.num as R_Num, R.id as R_Id,
           COALESCE(L.window_start, R.window_start) as window_start,
           COALESCE(L.window_end, R.window_end) as window_end
           FROM (
               SELECT * FROM TABLE(TUMBLE(TABLE LeftTable, DESCRIPTOR(row_time), INTERVAL '5' MINUTES))
           ) L
           JOIN (
               SELECT * FROM TABLE(TUMBLE(TABLE RightTable, DESCRIPTOR(row_time), INTERVAL '5' MINUTES))
           ) R
           ON L.num = R.num AND L.window_start = R.window_start AND L.window_end = R.window_end;
