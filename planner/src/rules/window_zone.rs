//! Windows over a TIMESTAMP_LTZ time column follow the session time zone
//! (`table.local-time-zone`): their boundaries are that zone's wall clock, and they fire at the
//! instants of their ends (Flink's shift time zone). This rule gives each window table function
//! over such a column the zone; the window aggregates, Top-Ns and deduplications made of it
//! later take its windows as they are.

use weir_operators::WindowZone;
use weir_runtime::time_zone::TimeZone;
use weir_runtime::types::LogicalType;

use crate::plan::{Node, Plan};

/// The plan with every window table function over a TIMESTAMP_LTZ in `zone`.
pub fn window_zone(plan: Plan, zone: TimeZone) -> Plan {
    let Plan { node, fields } = plan;
    let Ok(node) = node.try_map_inputs(|p| Ok::<_, std::convert::Infallible>(window_zone(p, zone)));
    let node = match node {
        Node::WindowTableFunction { input, time_col, mut window, partition, group_window } => {
            if matches!(input.fields[time_col].data_type.logical, LogicalType::TimestampLtz(_)) {
                window.zone = WindowZone(Some(zone));
            }
            Node::WindowTableFunction { input, time_col, window, partition, group_window }
        }
        node => node,
    };
    Plan { node, fields }
}

#[cfg(test)]
mod tests {
    use weir_operators::WindowZone;
    use weir_runtime::time_zone::TimeZone;

    use crate::plan::{Node, Plan};
    use crate::rules::testing::Fixture;

    /// The zones of the plan's window table functions, top first.
    fn zones(plan: &Plan) -> Vec<WindowZone> {
        let own = match &plan.node {
            Node::WindowTableFunction { window, .. } => vec![window.zone],
            _ => Vec::new(),
        };
        own.into_iter().chain(plan.node.inputs().into_iter().flat_map(zones)).collect()
    }

    /// A window over a TIMESTAMP_LTZ column takes the session's zone; one over a TIMESTAMP
    /// column keeps none.
    #[test]
    fn windows_over_ltz_columns_take_the_session_zone() {
        let f = Fixture::new(
            "CREATE TABLE ltz (ts TIMESTAMP_LTZ(3), WATERMARK FOR ts AS ts) WITH ('connector' = 'datagen');\n\
             CREATE TABLE local (ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ('connector' = 'datagen');",
        );
        let zone = TimeZone::parse("Asia/Shanghai").expect("a zone");
        let window = |table: &str| {
            f.bind(&format!(
                "SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE {table}, DESCRIPTOR(ts), INTERVAL '1' HOUR)) \
                 GROUP BY window_start, window_end"
            ))
        };
        let ltz = window("ltz");
        assert_eq!(zones(&ltz), vec![WindowZone(None)]);
        assert_eq!(zones(&super::window_zone(ltz, zone)), vec![WindowZone(Some(zone))]);
        assert_eq!(zones(&super::window_zone(window("local"), zone)), vec![WindowZone(None)]);
    }
}
