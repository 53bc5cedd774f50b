//! EXPLAIN against Apache Flink 2.3's own output (`tests/explain/*.flink.out`): the optimized
//! plans of the statements weir plans have Flink's node names, tree shape and attributes.

use std::path::Path;
use std::process::Command;

fn explain(case: &str) -> String {
    explain_with(case, &[])
}

/// [`explain`] with more arguments for `weir run` (`--set key=value`).
fn explain_with(case: &str, args: &[&str]) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/explain");
    let output = Command::new(env!("CARGO_BIN_EXE_weir"))
        .current_dir(&dir)
        .args(["run", &format!("{case}.sql"), "--parallelism", "2"])
        .args(args)
        .output()
        .unwrap();
    assert!(output.status.success(), "{case}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

fn flink(case: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/explain/{case}.flink.out")))
        .unwrap()
}

/// The lines of one section (`== Name ==` up to the next section).
fn section(text: &str, name: &str) -> Vec<String> {
    let header = format!("== {name} ==");
    text.lines()
        .skip_while(|l| *l != header)
        .skip(1)
        .take_while(|l| !l.starts_with("== "))
        .map(str::to_string)
        .filter(|l| !l.is_empty())
        .collect()
}

/// Asserts that weir's optimized physical and execution plans of `case` are Flink's, line for line.
fn assert_plans_as_flinks(case: &str) {
    let (ours, theirs) = (explain(case), flink(case));
    for name in ["Optimized Physical Plan", "Optimized Execution Plan"] {
        assert_eq!(section(&ours, name), section(&theirs, name), "{case}: {name}");
    }
}

/// Each node as its depth in the tree and its name: the shape of a plan.
fn shape(lines: &[String]) -> Vec<(usize, String)> {
    lines
        .iter()
        .map(|l| {
            let name_at = l.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(0);
            let name: String = l[name_at..].chars().take_while(|c| c.is_ascii_alphanumeric()).collect();
            (name_at / 3, name)
        })
        .collect()
}

/// With mini-batch on, a plan of projections and filters over sources without watermarks gets
/// no MiniBatchAssigner; one with an event-time attribute gets one above every source, as Flink
/// 2.3 plans them. A scan under a mini-batch aggregate reads its columns in the order the
/// aggregate reads them, so no Calc is left between them.
#[test]
fn mini_batch_assigners_and_scan_projections_as_flinks() {
    for case in ["minibatch_stateless", "minibatch_stateless_watermark", "minibatch_scan_projection"] {
        assert_plans_as_flinks(case);
    }
}

/// DISTINCT calls split into two phases read exactly as Flink prints them: the local phase
/// names each argument's distinct values (`DISTINCT(product) AS distinct$0`), and the calls of
/// both phases name the set they take them from.
#[test]
fn two_phase_distinct_plans_read_as_flinks() {
    for case in ["minibatch_two_phase_distinct", "minibatch_two_phase_distinct_filter"] {
        assert_plans_as_flinks(case);
    }
}

/// A local phase names its partials as Flink does: AVG's two as `(sum$0, count$1)`, SUM's one
/// (weir's SUM also keeps a count, which Flink's plan does not show) and the ones after them
/// numbered on from there. The scan lists its projected columns in the order the aggregate
/// reads them (its key, then its calls' arguments), then the rowtime, as Flink's does.
#[test]
fn local_phases_name_their_partials_as_flinks() {
    assert_plans_as_flinks("minibatch_two_phase_partials");
}

#[test]
fn optimized_plans_have_flinks_shape() {
    for case in [
        "group_agg",
        "statement_set_reuse_agg",
        "sink_keyed_shuffle",
        "minibatch_one_phase",
        "minibatch_two_phase",
        "minibatch_two_phase_distinct",
    ] {
        let (ours, theirs) = (explain(case), flink(case));
        for name in ["Optimized Physical Plan", "Optimized Execution Plan"] {
            let (a, b) = (section(&ours, name), section(&theirs, name));
            assert!(!a.is_empty(), "{case}: no {name} section in\n{ours}");
            assert_eq!(shape(&a), shape(&b), "{case}: {name}\n--- weir\n{}\n--- Flink\n{}", a.join("\n"), b.join("\n"));
        }
    }
}

#[test]
fn optimized_plans_print_flinks_attributes() {
    for case in
        ["group_agg", "statement_set_reuse_agg", "minibatch_one_phase", "minibatch_two_phase", "scalar_functions"]
    {
        assert_plans_as_flinks(case);
    }
}

#[test]
fn the_json_execution_plan_lists_operators_with_their_ship_strategies() {
    // Flink's JSON plan, line for line, but for the scan's projection order (weir lists the
    // projected columns in table order, Flink in order of use).
    let ours = section(&explain("sink_keyed_shuffle"), "Physical Execution Plan");
    let theirs = section(&flink("sink_keyed_shuffle"), "Physical Execution Plan");
    let comparable = |lines: Vec<String>| -> Vec<String> {
        lines.into_iter().filter(|l| !l.contains("TableSourceScan") && !l.trim().is_empty()).collect()
    };
    let (ours, theirs) = (comparable(ours), comparable(theirs));
    assert_eq!(ours, theirs);
    // With `table.exec.sink.keyed-shuffle` = FORCE the rows are hashed on the key even at the
    // input's parallelism, after the NOT NULL check of the key column.
    assert!(ours.iter().any(|l| l.contains("[6]:ConstraintEnforcer[NotNullEnforcer(fields=[user_id])]")));
    assert_eq!(ours.iter().filter(|l| l.contains("\"HASH\"")).count(), 2);
}

/// A GROUP BY of `window_start` and `window_end` over a window function is a two-phase window
/// aggregate; grouping by `window_start` alone is a regular aggregate over the window function,
/// with updates, as the second source document warns; a SESSION function on its own is a
/// WindowTableFunction after an exchange by its partition keys.
#[test]
fn window_aggregates_and_the_missing_window_end_plan_as_flinks() {
    for case in ["window_agg", "window_agg_missing_end", "session_tvf"] {
        assert_plans_as_flinks(case);
    }
}

/// A Top-N partitioned by window over a window aggregate is a WindowRank; rank 1 by rowtime over
/// a window function, not selected, is a WindowDeduplicate; both as Flink plans them.
#[test]
fn window_top_n_and_window_deduplication_plan_as_flinks() {
    for case in ["window_topn", "window_dedup"] {
        assert_plans_as_flinks(case);
    }
}

/// A streaming ORDER BY on a rowtime is a TemporalSort; a Top-N over insert-only rows a Rank of
/// the AppendFastStrategy, over an updating aggregate one of the RetractStrategy (with Flink's
/// changelog modes); ORDER BY … LIMIT a SortLimit and LIMIT a Limit (the projection above them);
/// the last row by rowtime a Deduplicate; OVER aggregates one OverAggregate with SUM expanded into
/// COUNT and $SUM0: line for line as Flink plans them.
#[test]
fn temporal_sort_top_n_and_over_aggregates_plan_as_flinks() {
    for case in ["temporal_sort", "topn", "over_agg", "sort_limit", "limit", "dedup_rowtime", "topn_updating"] {
        assert_plans_as_flinks(case);
    }
}

/// Keeping the first row per key by processing time is a Deduplicate in the execution plan (the
/// Rank it is in the physical plan), with the rank, selected, read as the constant 1. Flink names
/// that constant column `$2` (its rank-column removal leaves the projection unnamed); weir keeps
/// the query's name, `rn`; every other line is Flink's.
#[test]
fn deduplication_plans_as_flinks() {
    let (ours, theirs) = (explain("dedup"), flink("dedup"));
    for name in ["Optimized Physical Plan", "Optimized Execution Plan"] {
        let theirs: Vec<String> = section(&theirs, name).iter().map(|l| l.replace(" AS $2]", " AS rn]")).collect();
        assert_eq!(section(&ours, name), theirs, "dedup: {name}");
    }
}

/// OVER aggregates of a RANGE frame, and of a processing time (whose input Flink does not prune:
/// the projection would drop the rowtime below). An unnamed OVER item is `EXPR$2` in weir's Calc
/// (the name the query's result has), `$2` in Flink's; every other line is Flink's.
#[test]
fn range_and_processing_time_over_aggregates_plan_as_flinks() {
    for case in ["over_range", "over_proctime"] {
        let (ours, theirs) = (explain(case), flink(case));
        for name in ["Optimized Physical Plan", "Optimized Execution Plan"] {
            let theirs: Vec<String> = section(&theirs, name)
                .iter()
                .map(|l| {
                    l.replace(" AS $1]", " AS EXPR$1]")
                        .replace(" AS $2,", " AS EXPR$2,")
                        .replace(" AS $3]", " AS EXPR$3]")
                })
                .collect();
            assert_eq!(section(&ours, name), theirs, "{case}: {name}");
        }
    }
}

/// A group window of the older syntax is a one-phase GroupWindowAggregate with Flink's window
/// and properties. Flink's scan lists the columns it reads in order of use (`project=[ts,
/// product]`), weir's in table order; the scan line is compared with its lists sorted.
#[test]
fn legacy_group_windows_plan_as_flinks_group_window_aggregate() {
    fn sorted_lists(line: &str) -> String {
        let mut out = line.to_string();
        for key in ["project=[", "fields=["] {
            let Some(start) = out.find(key).map(|s| s + key.len()) else { continue };
            let end = start + out[start..].find(']').unwrap();
            let mut names: Vec<&str> = out[start..end].split(", ").collect();
            names.sort_unstable();
            out = format!("{}{}{}", &out[..start], names.join(", "), &out[end..]);
        }
        out
    }
    let case = "group_window_legacy";
    let (ours, theirs) = (explain(case), flink(case));
    for name in ["Optimized Physical Plan", "Optimized Execution Plan"] {
        let comparable = |lines: Vec<String>| -> Vec<String> { lines.iter().map(|l| sorted_lists(l)).collect() };
        assert_eq!(comparable(section(&ours, name)), comparable(section(&theirs, name)), "{case}: {name}");
    }
}

/// A LEFT JOIN of an insert-only input and an aggregate is a `Join` after hash exchanges on the
/// join keys, each side's state sized by its unique key (`JoinKeyContainsUniqueKey` for the
/// aggregate's), as Flink plans it. The execution plan is Flink's line for line; the physical
/// plan has its shape, but not yet its changelog modes: Flink lets the aggregate send upserts
/// (`[I,UA]`) to a side whose join key holds its unique key and emits `[I,UA,D]`, where weir
/// asks for update-befores and emits `[I,D]`.
#[test]
fn regular_joins_plan_as_flinks() {
    let case = "regular_join";
    let (ours, theirs) = (explain(case), flink(case));
    let name = "Optimized Execution Plan";
    assert_eq!(section(&ours, name), section(&theirs, name), "{case}: {name}");
    let name = "Optimized Physical Plan";
    assert_eq!(shape(&section(&ours, name)), shape(&section(&theirs, name)), "{case}: {name}");
}

/// Two windowed inputs joined on `window_start` alone are a regular `Join`, as the second
/// source document warns: the joined row's names made unique as Calcite makes them
/// (`window_start0`), each window function narrowed by a Calc right above it.
#[test]
fn a_join_of_windows_missing_window_end_is_a_regular_join() {
    let case = "window_join_missing_end";
    assert_plans_as_flinks(case);
}

/// A join bounding the two rowtimes from both sides (`BETWEEN`) is an `IntervalJoin` with Flink's
/// bounds; with `table.optimizer.window-join-enabled`, a join of two TUMBLE windows on both
/// windows' bounds is a `WindowJoin`, its other equality kept as its condition; and
/// `FOR SYSTEM_TIME AS OF` the left rowtime against a table with a primary key and a watermark
/// is an event-time `TemporalJoin`, its condition marked as Flink marks it.
#[test]
fn interval_window_and_temporal_joins_plan_as_flinks() {
    for case in ["interval_join", "window_join", "temporal_join"] {
        assert_plans_as_flinks(case);
    }
}

/// The seed's window join example: with `table.optimizer.window-join-enabled` on, the join
/// below the final Calc is the seed's `WindowJoin` subtree line for line (its catalog aside);
/// with the option off, the same statement is a regular `Join` on the key and both windows'
/// bounds. (The seed's Calc prints COALESCE as the CASE Calcite expands it into; weir keeps it.)
#[test]
fn the_window_join_option_switches_the_seeds_plan() {
    const SEED: &str = "\
+- WindowJoin(leftWindow=[TUMBLE(win_start=[window_start], win_end=[window_end], size=[5 min])], rightWindow=[TUMBLE(win_start=[window_start], win_end=[window_end], size=[5 min])], joinType=[InnerJoin], where=[(num = num0)], select=[id, num, window_start, window_end, id0, num0, window_start0, window_end0])
   :- Exchange(distribution=[hash[num]])
   :  +- Calc(select=[id, num, window_start, window_end])
   :     +- WindowTableFunction(window=[TUMBLE(time_col=[row_time], size=[5 min])])
   :        +- WatermarkAssigner(rowtime=[row_time], watermark=[(row_time - 5000:INTERVAL SECOND)])
   :           +- TableSourceScan(table=[[vvp, default, LeftTable]], fields=[id, row_time, num])
   +- Exchange(distribution=[hash[num]])
      +- Calc(select=[id, num, window_start, window_end])
         +- WindowTableFunction(window=[TUMBLE(time_col=[row_time], size=[5 min])])
            +- WatermarkAssigner(rowtime=[row_time], watermark=[(row_time - 10000:INTERVAL SECOND)])
               +- TableSourceScan(table=[[vvp, default, RightTable]], fields=[id, row_time, num])";
    let on = section(
        &explain_with("seed_window_join", &["--set", "table.optimizer.window-join-enabled=true"]),
        "Optimized Execution Plan",
    );
    let seed: Vec<String> =
        SEED.lines().map(|l| l.replace("[[vvp, default, ", "[[default_catalog, default_database, ")).collect();
    assert_eq!(on[1..], seed[..]);
    // Off by default.
    let off = section(&explain("seed_window_join"), "Optimized Execution Plan");
    assert!(
        off[1].starts_with("+- Join(joinType=[InnerJoin], where=[((num = num0) AND (window_start = window_start0)"),
        "{off:?}"
    );
    assert_eq!(off[2], "   :- Exchange(distribution=[hash[num, window_start, window_end]])");
}

/// Bounds between two `PROCTIME()` attributes make a processing-time `IntervalJoin`
/// (`isRowTime=false`). weir prints every day-time interval literal in seconds
/// (`3600000:INTERVAL SECOND`) where Flink keeps the literal's unit (`INTERVAL HOUR`); the
/// comparison reads Flink's with that unit.
#[test]
fn processing_time_interval_joins_plan_as_flinks() {
    let case = "interval_join_proctime";
    let (ours, theirs) = (explain(case), flink(case).replace("INTERVAL HOUR", "INTERVAL SECOND"));
    for name in ["Optimized Physical Plan", "Optimized Execution Plan"] {
        assert_eq!(section(&ours, name), section(&theirs, name), "{case}: {name}");
    }
}

/// `NOT EXISTS` over a correlated subquery is a LeftAntiJoin on the correlated equality, `IN` a
/// LeftSemiJoin; the table the query reads twice is scanned once (`reuse_id`), as Flink plans it.
#[test]
fn subqueries_plan_as_semi_and_anti_joins() {
    let case = "semi_anti";
    assert_plans_as_flinks(case);
}

/// The filesystem source takes the filter above it as Flink's does (`filter=[…]` on the scan,
/// the Calc kept), and a statement set shares a scan only between equal filters.
#[test]
fn filesystem_scans_show_their_pushed_filters_and_share_only_equal_ones() {
    for case in ["filesystem_filter_reuse", "filesystem_filter_no_reuse"] {
        assert_plans_as_flinks(case);
    }
}

/// `EXPLAIN PLAN_ADVICE` prints Flink's advice section as Flink does, character for character:
/// a one-phase group aggregate is advised to run in two phases (naming the settings to change),
/// and a plan without advice says so.
#[test]
fn plan_advice_reads_as_flinks() {
    let advised = |text: &str| -> String {
        let start = text.find("== Optimized Physical Plan With Advice ==").expect("the advice section");
        let end = text.find("== Optimized Execution Plan ==").expect("the execution plan");
        text[start..end].to_string()
    };
    for case in ["plan_advice", "plan_advice_none"] {
        assert_eq!(advised(&explain(case)), advised(&flink(case)), "{case}");
    }
    // With mini-batch on but one phase forced, the advice names only the strategy.
    let one_phase = explain_with(
        "plan_advice",
        &[
            "--set",
            "table.exec.mini-batch.enabled=true",
            "--set",
            "table.exec.mini-batch.allow-latency=1s",
            "--set",
            "table.exec.mini-batch.size=100",
            "--set",
            "table.optimizer.agg-phase-strategy=ONE_PHASE",
        ],
    );
    assert!(
        one_phase.contains(
            "advice[1]: [ADVICE] You might want to enable local-global two-phase optimization by configuring \
             ('table.optimizer.agg-phase-strategy' to 'AUTO')."
        ),
        "{one_phase}"
    );
}

/// GROUPING SETS, ROLLUP and CUBE plan as Flink's: an Expand of the sets with their ids (`$e`)
/// below the aggregate (two phases with mini-batch), GROUPING and GROUPING_ID a CASE over `$e`
/// in the Calc above. Flink prints a CASE branch shared by several ids as `SEARCH($e, Sarg[…])`,
/// which weir writes as one branch per id, and types the literal compared with a CASE in the
/// physical plan (`1:BIGINT`); every other line is Flink's.
#[test]
fn grouping_sets_plan_as_flinks_expand() {
    for case in ["grouping_sets", "grouping_sets_two_phase"] {
        let (ours, theirs) = (explain(case), flink(case));
        for name in ["Optimized Physical Plan", "Optimized Execution Plan"] {
            let (a, b) = (section(&ours, name), section(&theirs, name));
            assert_eq!(shape(&a), shape(&b), "{case}: {name}\n--- weir\n{}\n--- Flink\n{}", a.join("\n"), b.join("\n"));
            let below_the_calc = |lines: &[String]| lines[1..].to_vec();
            assert_eq!(below_the_calc(&a), below_the_calc(&b), "{case}: {name}");
            assert!(a[1].contains("groupBy=[user_id, product, $e]"), "{case}: {}", a[1]);
        }
    }
    assert_eq!(
        section(&explain("grouping_sets"), "Optimized Execution Plan"),
        section(&flink("grouping_sets"), "Optimized Execution Plan")
    );
}

/// Each MiniBatchAssigner has Flink's mode: RowTime below an operator that needs watermarks (a
/// window aggregate under a group aggregate, an interval join, a deduplication on event time),
/// ProcTime elsewhere (a TemporalSort does not ask for watermarks in Flink).
#[test]
fn mini_batch_assigners_take_flinks_mode() {
    for case in [
        "minibatch_rowtime_window",
        "minibatch_rowtime_interval_join",
        "minibatch_temporal_sort",
        "minibatch_dedup_rowtime",
    ] {
        assert_plans_as_flinks(case);
    }
}

/// Every section called `name` in `text`, in order (a script of several EXPLAINs).
fn sections(text: &str, name: &str) -> Vec<Vec<String>> {
    let header = format!("== {name} ==");
    text.split(&header).skip(1).map(|rest| section(&format!("{header}\n{rest}"), name)).collect()
}

/// Partition push-down as Flink's: a filter over the partition column alone names the
/// partitions read (`partitions=[{dt=…}]`, listed when the query is planned) and leaves the
/// Calc, the scan reads no partition column nobody uses, and no partition left is an empty
/// VALUES; a disjunction with another column chooses none.
#[test]
fn partition_filters_choose_the_partitions_read_as_flinks() {
    assert_every_plan_as_flinks("filesystem_partitions", 4);
}

/// Literals read as Flink's: plain quotes in the execution plan, `_UTF-16LE'…'` with doubled
/// quotes in the others, times as Calcite writes them, a DECIMAL or TIMESTAMP with a fraction
/// typed, a CASE's string literals typed as the CASE, and a string literal compared by `=` typed
/// as the other side in the physical plan (as Flink's optimizer leaves it).
#[test]
fn literals_print_as_flinks() {
    assert_every_plan_as_flinks("literals", 4);
}

/// Asserts that every section of the `count` statements of `case` is Flink's, line for line.
fn assert_every_plan_as_flinks(case: &str, count: usize) {
    let (ours, theirs) = (explain(case), flink(case));
    for name in ["Abstract Syntax Tree", "Optimized Physical Plan", "Optimized Execution Plan"] {
        let (a, b) = (sections(&ours, name), sections(&theirs, name));
        assert_eq!(a.len(), count, "{case}: {name} of {count} statements in\n{ours}");
        assert_eq!(a, b, "{case}: {name}");
    }
}
