//! A scriptable model for tests, and rollout generators.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use memory_protocol::consolidation::{ConsolidationInput, ConsolidationOutput};
use memory_protocol::stage_one::StageOneInput;
use memory_protocol::{
    ModelClient, ModelError, ModelRequest, ModelResponse, ResponseItem, StageOneOutput, TaskKind,
    TokenUsage,
};
use memory_write::store::WriteStore;

/// What the fake model answers.
#[derive(Debug, Clone)]
pub(crate) enum Answer {
    /// A memory naming the thread and quoting its first user message; all-empty when the
    /// rollout has no tool calls.
    Echo,
    /// This exact text.
    Raw(String),
    /// This error.
    Error(ModelError),
    /// A context-overflow error while the prompt holds more than this many bytes, then
    /// [`Answer::Echo`].
    OverflowAbove(usize),
}

pub(crate) struct FakeModel {
    pub(crate) answer: Answer,
    pub(crate) delay: Duration,
    pub(crate) window: Option<u64>,
    /// Threads whose requests fail with a transient error.
    pub(crate) failing: HashSet<String>,
    pub(crate) requests: Mutex<Vec<ModelRequest>>,
    in_flight: AtomicUsize,
    pub(crate) max_in_flight: AtomicUsize,
    /// What `rate_limit()` reports.
    pub(crate) rate_limit: Option<memory_protocol::RateLimitSnapshot>,
    /// At the n-th request (from 1), write this file and never answer: a process waiting
    /// there to be killed, with jobs in flight.
    pub(crate) hang_at_request: Option<(usize, PathBuf)>,
    /// Never answer any request; once this many wait at once, write this file: a process
    /// waiting to be killed with that many jobs in flight.
    pub(crate) hold_all: Option<(usize, PathBuf)>,
    /// At the first consolidation request, write the first file and wait until the second
    /// exists: a pass held open while the test does something else.
    pub(crate) consolidation_gate: Option<(PathBuf, PathBuf)>,
    calls: AtomicUsize,
    held: AtomicUsize,
    consolidations: AtomicUsize,
}

/// Last line of every `MEMORY.md` the fake model writes: a file without it was torn.
pub(crate) const MEMORY_END: &str = "<!-- end of memory -->";

/// The consolidation answer: one line per selected memory, under its project (its cwd).
fn consolidate(input: &ConsolidationInput) -> String {
    let mut lines: Vec<String> = input
        .selected
        .iter()
        .map(|record| {
            format!(
                "- project `{}`: {}",
                record.cwd.as_deref().unwrap_or("unknown"),
                record.raw_memory.trim()
            )
        })
        .collect();
    lines.sort();
    let output = ConsolidationOutput {
        memory_md: format!("# Memory\n\n{}\n\n{MEMORY_END}\n", lines.join("\n")),
        memory_summary_md: format!("v1\n{} memories\n", lines.len()),
        obsolete: Vec::new(),
    };
    serde_json::to_string(&output).unwrap()
}

impl FakeModel {
    pub(crate) fn new(answer: Answer) -> FakeModel {
        FakeModel {
            answer,
            delay: Duration::ZERO,
            window: None,
            failing: HashSet::new(),
            requests: Mutex::new(Vec::new()),
            in_flight: AtomicUsize::new(0),
            max_in_flight: AtomicUsize::new(0),
            rate_limit: None,
            hang_at_request: None,
            hold_all: None,
            consolidation_gate: None,
            calls: AtomicUsize::new(0),
            held: AtomicUsize::new(0),
            consolidations: AtomicUsize::new(0),
        }
    }

    pub(crate) fn requests(&self) -> Vec<ModelRequest> {
        self.requests.lock().unwrap().clone()
    }
}

pub(crate) fn first_user_text(items: &[ResponseItem]) -> String {
    items
        .iter()
        .find_map(|item| match item {
            ResponseItem::Message(m) if m.role == "user" => {
                m.content.iter().find_map(|c| c.text().map(str::to_owned))
            }
            _ => None,
        })
        .unwrap_or_default()
}

#[async_trait]
impl ModelClient for FakeModel {
    fn name(&self) -> String {
        "fake".to_owned()
    }

    fn context_window(&self) -> Option<u64> {
        self.window
    }

    fn rate_limit(&self) -> Option<memory_protocol::RateLimitSnapshot> {
        self.rate_limit
    }

    async fn complete(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
        let call = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        if let Some((at, marker)) = &self.hang_at_request
            && call == *at
        {
            std::fs::write(marker, "waiting to be killed").unwrap();
            std::future::pending::<()>().await;
        }
        if let Some((count, marker)) = &self.hold_all {
            if self.held.fetch_add(1, Ordering::SeqCst) + 1 == *count {
                std::fs::write(marker, "waiting to be killed").unwrap();
            }
            std::future::pending::<()>().await;
        }
        if request.task == TaskKind::Consolidation {
            let input: ConsolidationInput =
                serde_json::from_value(request.structured_input.clone()).map_err(|e| {
                    ModelError::Other {
                        message: e.to_string(),
                    }
                })?;
            if let Some((marker, gate)) = &self.consolidation_gate
                && self.consolidations.fetch_add(1, Ordering::SeqCst) == 0
            {
                std::fs::write(marker, "consolidating").unwrap();
                while !gate.exists() {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            }
            return Ok(ModelResponse {
                text: consolidate(&input),
                usage: None,
            });
        }
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_in_flight.fetch_max(now, Ordering::SeqCst);
        if !self.delay.is_zero() {
            tokio::time::sleep(self.delay).await;
        }
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        self.requests.lock().unwrap().push(request.clone());
        let input: StageOneInput = serde_json::from_value(request.structured_input.clone())
            .map_err(|e| ModelError::Other {
                message: e.to_string(),
            })?;
        if self.failing.contains(&input.thread_id) {
            return Err(ModelError::Transient {
                message: format!("scripted failure for {}", input.thread_id),
            });
        }
        let usage = Some(TokenUsage {
            input_tokens: 100,
            output_tokens: 10,
            ..TokenUsage::default()
        });
        let text = match &self.answer {
            Answer::Raw(text) => text.clone(),
            Answer::Error(error) => return Err(error.clone()),
            Answer::OverflowAbove(limit) if request.input.len() > *limit => {
                return Err(ModelError::ContextOverflow {
                    message: format!("{} bytes is more than {limit}", request.input.len()),
                });
            }
            Answer::Echo | Answer::OverflowAbove(_) => {
                let has_tools = input
                    .items
                    .iter()
                    .any(|item| matches!(item, ResponseItem::FunctionCall(_)));
                let output = if has_tools {
                    StageOneOutput {
                        raw_memory: format!(
                            "memory of {}: {}",
                            input.thread_id,
                            first_user_text(&input.items)
                        ),
                        rollout_summary: format!("# summary of {}", input.thread_id),
                        rollout_slug: Some("echo".to_owned()),
                    }
                } else {
                    StageOneOutput::default()
                };
                serde_json::to_string(&output).unwrap()
            }
        };
        Ok(ModelResponse { text, usage })
    }
}

/// Writes `count` small interactive rollouts (last active in 2025) and returns their thread
/// ids, in index order.
pub(crate) fn write_rollouts(dir: &Path, count: usize) -> Vec<String> {
    write_rollouts_numbered(dir, 0..count)
}

/// [`write_rollouts`] numbered from `indexes` (distinct thread ids for another "machine").
pub(crate) fn write_rollouts_numbered(dir: &Path, indexes: std::ops::Range<usize>) -> Vec<String> {
    indexes
        .map(|index| {
            let id = format!("0199{index:04x}-0000-7000-8000-000000000000");
            let day = 1 + index % 28;
            let folder: PathBuf = dir.join(format!("2025/10/{day:02}"));
            std::fs::create_dir_all(&folder).unwrap();
            let ts = format!("2025-10-{day:02}T10:00:00.000Z");
            let lines = [
                format!(
                    r#"{{"timestamp":"{ts}","type":"session_meta","payload":{{"id":"{id}","cwd":"/work/p{index}","source":"cli"}}}}"#
                ),
                format!(
                    r#"{{"timestamp":"{ts}","type":"response_item","payload":{{"type":"message","role":"user","content":[{{"type":"input_text","text":"task {index}: make the build green"}}]}}}}"#
                ),
                format!(
                    r#"{{"timestamp":"{ts}","type":"response_item","payload":{{"type":"function_call","name":"exec_command","arguments":"{{\"cmd\":\"make test\"}}","call_id":"c{index}"}}}}"#
                ),
                format!(
                    r#"{{"timestamp":"{ts}","type":"response_item","payload":{{"type":"function_call_output","call_id":"c{index}","output":"ok"}}}}"#
                ),
                format!(
                    r#"{{"timestamp":"{ts}","type":"response_item","payload":{{"type":"message","role":"assistant","content":[{{"type":"output_text","text":"done"}}]}}}}"#
                ),
            ];
            let path = folder.join(format!("rollout-2025-10-{day:02}T10-00-00-{id}.jsonl"));
            std::fs::write(path, lines.join("\n") + "\n").unwrap();
            id
        })
        .collect()
}

/// Every file under `dir`, recursively.
pub(crate) fn all_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(all_files(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// The ids of every thread `store` knows, sorted.
pub(crate) async fn sorted_thread_ids(store: &dyn WriteStore) -> Vec<String> {
    let mut ids: Vec<String> = store
        .threads()
        .await
        .unwrap()
        .into_iter()
        .map(|thread| thread.session.id)
        .collect();
    ids.sort();
    ids
}
