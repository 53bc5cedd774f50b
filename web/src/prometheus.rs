//! `/metrics` in the Prometheus text format, named and labelled as Flink's Prometheus reporter
//! names them: `flink_` + the scope (`taskmanager_job_task`, `taskmanager_job_task_operator`,
//! `jobmanager_job`, `jobmanager`) + `_` + the metric, every Flink counter and gauge a Prometheus
//! gauge, labels the scope's variables (`job_id`, `job_name`, `task_name`, `subtask_index`,
//! `operator_name`, …) with every character outside `[a-zA-Z0-9:_]` written as `_`.
//!
//! The jobs of the process that ended stay listed with their final values until it exits.

use std::collections::HashMap;
use std::fmt::Write;
use std::rc::Rc;

use weir_runtime::jobs::{JobInfo, JobRegistry};

use crate::rates::Rates;
use crate::values::subtask_metric_values;

/// The content type of the text format.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Flink's filter of label values: characters outside `[a-zA-Z0-9:_]` become `_`.
pub fn label_value(value: &str) -> String {
    value.chars().map(|c| if c.is_ascii_alphanumeric() || c == ':' || c == '_' { c } else { '_' }).collect()
}

/// One metric family being written: `flink_<scope>_<metric>`, and its samples (rendered labels,
/// shared by the samples of one subtask, and value).
struct Family {
    scope: &'static str,
    metric: &'static str,
    help: &'static str,
    samples: Vec<(Rc<str>, f64)>,
}

/// The families of a scrape, in the order they were first named.
#[derive(Default)]
struct Families {
    families: Vec<Family>,
    index: HashMap<(&'static str, &'static str), usize>,
}

/// `labels` as the text between a sample's braces, values filtered as Flink's reporter does.
fn rendered(labels: &[(&str, String)]) -> Rc<str> {
    labels.iter().map(|(k, v)| format!("{k}=\"{}\"", label_value(v))).collect::<Vec<_>>().join(",").into()
}

impl Families {
    fn add(&mut self, scope: &'static str, metric: &'static str, help: &'static str, labels: &Rc<str>, value: f64) {
        let at = *self.index.entry((scope, metric)).or_insert_with(|| {
            self.families.push(Family { scope, metric, help, samples: Vec::new() });
            self.families.len() - 1
        });
        self.families[at].samples.push((Rc::clone(labels), value));
    }

    fn write(self) -> String {
        let mut text = String::new();
        for family in self.families {
            // Prometheus names allow letters, digits and `_` (Flink's reporter maps the rest so).
            let metric = family.metric.replace(|c: char| !c.is_ascii_alphanumeric(), "_");
            let name = format!("flink_{}_{metric}", family.scope);
            let _ = writeln!(text, "# HELP {name} {}", family.help);
            let _ = writeln!(text, "# TYPE {name} gauge");
            for (labels, value) in family.samples {
                let _ = writeln!(text, "{name}{{{labels}}} {}", number(value));
            }
        }
        text
    }
}

/// A sample value as Prometheus reads it.
fn number(value: f64) -> String {
    if value.is_nan() {
        "NaN".into()
    } else if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{value:.1}")
    } else {
        format!("{value}")
    }
}

/// Every metric of every job in `registry`, in the Prometheus text format.
pub fn render(registry: &JobRegistry, rates: &Rates) -> String {
    let mut families = Families::default();
    let jobs = registry.jobs();
    let running = jobs.iter().filter(|j| !j.lifecycle().state().is_terminal()).count();
    let host = rendered(&[("host", "localhost".to_string())]);
    families.add("jobmanager", "numRunningJobs", "Jobs running.", &host, running as f64);
    families.add("jobmanager", "numRegisteredTaskManagers", "Task managers (weir: the process).", &host, 1.0);
    for job in &jobs {
        job_metrics(&mut families, job);
        task_metrics(&mut families, job, rates);
    }
    families.write()
}

fn job_metrics(families: &mut Families, job: &JobInfo) {
    let labels =
        rendered(&[("host", "localhost".to_string()), ("job_id", job.id.to_string()), ("job_name", job.name.clone())]);
    for (metric, help, value) in crate::values::job_metric_values(job) {
        families.add("jobmanager_job", metric, help, &labels, value);
    }
}

fn task_metrics(families: &mut Families, job: &JobInfo, rates: &Rates) {
    for vertex in &job.topology.vertices {
        for (i, subtask) in vertex.subtasks.iter().enumerate() {
            let labels = [
                ("host", "localhost".to_string()),
                ("job_id", job.id.to_string()),
                ("job_name", job.name.clone()),
                ("subtask_index", i.to_string()),
                ("task_attempt_id", format!("{}_{}_{i}_0", job.id, vertex.id)),
                ("task_attempt_num", "0".to_string()),
                ("task_id", vertex.id.clone()),
                ("task_name", vertex.name.clone()),
                ("tm_id", "weir".to_string()),
            ];
            let task_labels = rendered(&labels);
            for metric in subtask_metric_values(subtask, rates) {
                match metric.operator {
                    None => {
                        families.add("taskmanager_job_task", metric.metric, metric.help, &task_labels, metric.value)
                    }
                    Some(operator) => {
                        let at = vertex.operators.iter().position(|o| *o == operator);
                        let id = at.and_then(|at| vertex.operator_ids.get(at)).unwrap_or(&vertex.id);
                        let mut operator_labels = labels.to_vec();
                        operator_labels.push(("operator_id", id.clone()));
                        operator_labels.push(("operator_name", operator));
                        let scope = "taskmanager_job_task_operator";
                        families.add(scope, metric.metric, metric.help, &rendered(&operator_labels), metric.value);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_keep_only_what_flinks_filter_keeps() {
        assert_eq!(label_value("Source: raw_table_1 -> raw_validation"), "Source:_raw_table_1____raw_validation");
    }

    #[test]
    fn numbers_print_as_prometheus_reads_them() {
        assert_eq!(number(3.0), "3.0");
        assert_eq!(number(0.25), "0.25");
        assert_eq!(number(f64::NAN), "NaN");
        assert_eq!(number(i64::MIN as f64), "-9223372036854776000");
    }
}
