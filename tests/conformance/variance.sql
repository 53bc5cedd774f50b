-- VAR_POP, VAR_SAMP, STDDEV_POP and STDDEV_SAMP of every numeric type: Welford's running
-- variance in DOUBLE cast to the argument's type (DECIMAL(38, max(6, s)) for a DECIMAL), one
-- row and all-NULL groups, values whose squares overflow the type, NaN and infinities.
CREATE TABLE v_tinyint (g INT, x TINYINT) WITH ('connector' = 'filesystem', 'path' = 'data/variance/tinyint.csv', 'format' = 'csv', 'csv.null-literal' = 'NULL');
CREATE TABLE out_tinyint (g INT, vp TINYINT, vs TINYINT, sp TINYINT, ss TINYINT, n BIGINT) WITH ('connector' = 'print', 'print-identifier' = 'tinyint');
CREATE TABLE v_smallint (g INT, x SMALLINT) WITH ('connector' = 'filesystem', 'path' = 'data/variance/smallint.csv', 'format' = 'csv', 'csv.null-literal' = 'NULL');
CREATE TABLE out_smallint (g INT, vp SMALLINT, vs SMALLINT, sp SMALLINT, ss SMALLINT, n BIGINT) WITH ('connector' = 'print', 'print-identifier' = 'smallint');
CREATE TABLE v_int (g INT, x INT) WITH ('connector' = 'filesystem', 'path' = 'data/variance/int.csv', 'format' = 'csv', 'csv.null-literal' = 'NULL');
CREATE TABLE out_int (g INT, vp INT, vs INT, sp INT, ss INT, n BIGINT) WITH ('connector' = 'print', 'print-identifier' = 'int');
CREATE TABLE v_bigint (g INT, x BIGINT) WITH ('connector' = 'filesystem', 'path' = 'data/variance/bigint.csv', 'format' = 'csv', 'csv.null-literal' = 'NULL');
CREATE TABLE out_bigint (g INT, vp BIGINT, vs BIGINT, sp BIGINT, ss BIGINT, n BIGINT) WITH ('connector' = 'print', 'print-identifier' = 'bigint');
CREATE TABLE v_float (g INT, x FLOAT) WITH ('connector' = 'filesystem', 'path' = 'data/variance/float.csv', 'format' = 'csv', 'csv.null-literal' = 'NULL');
CREATE TABLE out_float (g INT, vp FLOAT, vs FLOAT, sp FLOAT, ss FLOAT, n BIGINT) WITH ('connector' = 'print', 'print-identifier' = 'float');
CREATE TABLE v_double (g INT, x DOUBLE) WITH ('connector' = 'filesystem', 'path' = 'data/variance/double.csv', 'format' = 'csv', 'csv.null-literal' = 'NULL');
CREATE TABLE out_double (g INT, vp DOUBLE, vs DOUBLE, sp DOUBLE, ss DOUBLE, n BIGINT) WITH ('connector' = 'print', 'print-identifier' = 'double');
CREATE TABLE v_dec10_2 (g INT, x DECIMAL(10, 2)) WITH ('connector' = 'filesystem', 'path' = 'data/variance/dec10_2.csv', 'format' = 'csv', 'csv.null-literal' = 'NULL');
CREATE TABLE out_dec10_2 (g INT, vp DECIMAL(38, 6), vs DECIMAL(38, 6), sp DECIMAL(38, 6), ss DECIMAL(38, 6), n BIGINT) WITH ('connector' = 'print', 'print-identifier' = 'dec10_2');
CREATE TABLE v_dec38_18 (g INT, x DECIMAL(38, 18)) WITH ('connector' = 'filesystem', 'path' = 'data/variance/dec38_18.csv', 'format' = 'csv', 'csv.null-literal' = 'NULL');
CREATE TABLE out_dec38_18 (g INT, vp DECIMAL(38, 18), vs DECIMAL(38, 18), sp DECIMAL(38, 18), ss DECIMAL(38, 18), n BIGINT) WITH ('connector' = 'print', 'print-identifier' = 'dec38_18');
CREATE TABLE v_dec5_0 (g INT, x DECIMAL(5, 0)) WITH ('connector' = 'filesystem', 'path' = 'data/variance/dec5_0.csv', 'format' = 'csv', 'csv.null-literal' = 'NULL');
CREATE TABLE out_dec5_0 (g INT, vp DECIMAL(38, 6), vs DECIMAL(38, 6), sp DECIMAL(38, 6), ss DECIMAL(38, 6), n BIGINT) WITH ('connector' = 'print', 'print-identifier' = 'dec5_0');
EXECUTE STATEMENT SET BEGIN
INSERT INTO out_tinyint SELECT g, VAR_POP(x), VAR_SAMP(x), STDDEV_POP(x), STDDEV_SAMP(x), COUNT(x) FROM v_tinyint GROUP BY g;
INSERT INTO out_smallint SELECT g, VAR_POP(x), VAR_SAMP(x), STDDEV_POP(x), STDDEV_SAMP(x), COUNT(x) FROM v_smallint GROUP BY g;
INSERT INTO out_int SELECT g, VAR_POP(x), VAR_SAMP(x), STDDEV_POP(x), STDDEV_SAMP(x), COUNT(x) FROM v_int GROUP BY g;
INSERT INTO out_bigint SELECT g, VAR_POP(x), VAR_SAMP(x), STDDEV_POP(x), STDDEV_SAMP(x), COUNT(x) FROM v_bigint GROUP BY g;
INSERT INTO out_float SELECT g, VAR_POP(x), VAR_SAMP(x), STDDEV_POP(x), STDDEV_SAMP(x), COUNT(x) FROM v_float GROUP BY g;
INSERT INTO out_double SELECT g, VAR_POP(x), VAR_SAMP(x), STDDEV_POP(x), STDDEV_SAMP(x), COUNT(x) FROM v_double GROUP BY g;
INSERT INTO out_dec10_2 SELECT g, VAR_POP(x), VAR_SAMP(x), STDDEV_POP(x), STDDEV_SAMP(x), COUNT(x) FROM v_dec10_2 GROUP BY g;
INSERT INTO out_dec38_18 SELECT g, VAR_POP(x), VAR_SAMP(x), STDDEV_POP(x), STDDEV_SAMP(x), COUNT(x) FROM v_dec38_18 GROUP BY g;
INSERT INTO out_dec5_0 SELECT g, VAR_POP(x), VAR_SAMP(x), STDDEV_POP(x), STDDEV_SAMP(x), COUNT(x) FROM v_dec5_0 GROUP BY g;
END;
