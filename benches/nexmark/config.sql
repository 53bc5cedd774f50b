-- The table options of the Nexmark repository's Flink setup (`conf/config.yaml`, the "V1"
-- configuration Flink's reference figures in benches/README.md were measured with): mini-batch
-- aggregation of up to 50 000 rows or 2 seconds, and COUNT(DISTINCT …) split into two levels.
-- The runner puts these before every query, on weir and on Flink alike.
SET 'table.exec.mini-batch.enabled' = 'true';
SET 'table.exec.mini-batch.allow-latency' = '2s';
SET 'table.exec.mini-batch.size' = '50000';
SET 'table.optimizer.distinct-agg.split.enabled' = 'true';
