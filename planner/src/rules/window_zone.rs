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
