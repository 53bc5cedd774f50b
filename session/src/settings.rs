//! Every setting weir reads, in one table: the runtime's, the planner's and the session's (the
//! SQL client's, recovery's, the table store's, the web servers' and Python's). Each is declared
//! (key, type, default, description, check) beside the code that reads it; this table lists them
//! for `SET` (which checks a value against its declaration), `RESET`, `SET;` and the
//! documentation (`docs/sql.md`'s settings table is [`markdown_table`], kept equal by a test).

use weir_planner::settings::PLANNER_SETTINGS;
use weir_runtime::settings::{Settings, Spec};
use weir_runtime::RuntimeConfig;

use crate::{managed, python, recovery};

/// The session's settings: the SQL client's, recovery's, the table store's, the web servers' and
/// Python's.
static SESSION_SETTINGS: [&Spec; 22] = [
    &crate::RESULT_MODE.spec,
    &crate::MAX_TABLE_RESULT_ROWS.spec,
    &crate::DML_SYNC.spec,
    &crate::PRINT_METRICS.spec,
    &recovery::PIPELINE_NAME.spec,
    &recovery::RECOVERY_PATH.spec,
    &recovery::SAVEPOINT_PATH.spec,
    &recovery::IGNORE_UNCLAIMED.spec,
    &recovery::SAVEPOINT_DIR.spec,
    &managed::STORE_PATH.spec,
    &crate::REST_PORT.spec,
    &crate::REST_BIND_ADDRESS.spec,
    &crate::REST_ADDRESS.spec,
    &crate::REST_IDLENESS_TIMEOUT.spec,
    &crate::REST_MAX_CONNECTIONS.spec,
    &crate::REST_TOKEN.spec,
    &crate::REST_SAVEPOINT_DIRS.spec,
    &crate::PROMETHEUS_PORT.spec,
    &crate::PROMETHEUS_FACTORY.spec,
    &python::FILES.spec,
    &python::EXECUTABLE.spec,
    &python::ARROW_BATCH_SIZE.spec,
];

/// Every declared setting, in the order the documentation lists them: the runtime's
/// ([`RuntimeConfig::SETTINGS`]), the planner's ([`PLANNER_SETTINGS`]), then the session's.
pub fn all() -> &'static [&'static Spec] {
    static ALL: std::sync::OnceLock<Vec<&'static Spec>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| {
        RuntimeConfig::SETTINGS.iter().chain(&PLANNER_SETTINGS).chain(&SESSION_SETTINGS).copied().collect()
    })
}

/// An empty set of session settings over [`all`].
pub fn session_settings() -> Settings {
    Settings::new(all())
}

/// Every declared key with its value for a session, as `SET;` lists them: the value set, else
/// the value the session's runtime started with (for runtime keys), else the default.
pub fn listing(settings: &Settings, initial: &RuntimeConfig) -> Vec<(String, String)> {
    let mut rows: Vec<(String, String)> = all()
        .iter()
        .map(|spec| {
            let value = match settings.text(spec.key) {
                Some(text) => text.to_string(),
                None => initial.value_text(spec.key).unwrap_or_else(|| spec.default_text.to_string()),
            };
            (spec.key.to_string(), value)
        })
        .collect();
    let undeclared = settings.iter().filter(|(k, _)| settings.spec(k).is_none());
    rows.extend(undeclared.map(|(k, v)| (k.to_string(), v.to_string())));
    rows.sort();
    rows
}

/// The documentation's table of every setting (key, default, whether Flink has it, meaning).
pub fn markdown_table() -> String {
    let mut text = String::from("| key | default | accepts | meaning |\n|---|---|---|---|\n");
    for spec in all() {
        let origin = if spec.flink { "" } else { "weir: " };
        text.push_str(&format!(
            "| `{}` | `{}` | {} | {origin}{} |\n",
            spec.key,
            spec.default_text,
            spec.kind.describe(),
            spec.description
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How the defaults that are not values print.
    fn described_default(key: &str) -> &'static str {
        match key {
            "execution.worker-threads" => "number of cores",
            _ => "none",
        }
    }

    #[test]
    fn every_key_is_declared_once_and_its_default_is_of_its_kind() {
        let mut keys: Vec<&str> = all().iter().map(|s| s.key).collect();
        keys.sort_unstable();
        let before = keys.len();
        keys.dedup();
        assert_eq!(before, keys.len(), "a key is listed twice");
        for spec in all() {
            // The printed default reads back as the declared one (where it is a value).
            // Defaults that are not values: the machine's core count, no limit, none set.
            let described = [
                "execution.worker-threads",
                "taskmanager.memory.process.size",
                "state.backend.rocksdb.memory.fixed-per-slot",
                "execution.checkpointing.interval",
                "pipeline.name",
                "execution.state-recovery.path",
                "execution.savepoint.path",
                "execution.checkpointing.savepoint-dir",
                "rest.bind-address",
                "rest.address",
                "rest.authentication.token",
                "rest.savepoint.allowed-directories",
                "metrics.reporter.prom.factory.class",
                "python.files",
            ];
            match spec.kind.parse(spec.key, spec.default_text) {
                _ if described.contains(&spec.key) => assert_eq!(spec.default_text, described_default(spec.key)),
                Ok(parsed) => assert_eq!(parsed, spec.default, "{}", spec.key),
                Err(_) => panic!("{} prints a default it refuses", spec.key),
            }
        }
    }

    #[test]
    fn set_checks_declared_keys_and_keeps_others() {
        let mut settings = session_settings();
        let err = settings.set("table.exec.sink.keyed-shuffle", "sometimes").unwrap_err().to_string();
        assert_eq!(
            err,
            "Invalid value 'sometimes' for option 'table.exec.sink.keyed-shuffle': one of 'NONE', 'AUTO', 'FORCE'"
        );
        settings.set("pipeline.name", "anything").unwrap();
        let listed = listing(&settings, &RuntimeConfig::default().with_parallelism(3));
        assert!(listed.contains(&("pipeline.name".into(), "anything".into())));
        assert!(listed.contains(&("parallelism.default".into(), "3".into())));
        assert!(listed.contains(&("table.exec.mini-batch.memory-budget".into(), "64 mb".into())));
    }
}

#[cfg(test)]
mod documentation {
    /// `docs/sql.md` shows [`super::markdown_table`] between its settings markers; with
    /// `WEIR_BLESS=1` the test writes it there.
    #[test]
    fn the_documented_settings_table_is_the_declared_one() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/sql.md");
        let text = std::fs::read_to_string(&path).unwrap();
        let (begin, end) = ("<!-- settings:begin -->\n", "<!-- settings:end -->");
        let start = text.find(begin).expect("docs/sql.md has the settings markers") + begin.len();
        let stop = text[start..].find(end).expect("docs/sql.md closes the settings markers") + start;
        let table = super::markdown_table();
        if std::env::var_os("WEIR_BLESS").is_some() {
            std::fs::write(&path, format!("{}{table}{}", &text[..start], &text[stop..])).unwrap();
        } else {
            assert_eq!(&text[start..stop], table, "run the test with WEIR_BLESS=1 to update docs/sql.md");
        }
    }
}
