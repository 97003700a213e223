//! `cargo xtask eval extract`: the offline engine's extraction against labelled transcripts.
//!
//! Every `fixtures/eval/extract/<name>.jsonl` is a codex rollout written for this evaluation;
//! `<name>.toml` next to it holds what a person would say about it: each task's title (and the
//! words any fitting title must contain) and outcome, the preferences the user stated and the
//! failure lessons, each with the terms that identify it. The rollouts go through the real
//! path: the scan registers them, phase 1 prepares each request (filter, redaction,
//! truncation), the offline engine answers, and the raw memory is read back with the shared
//! format parser.
//!
//! Scores, over all transcripts:
//! - `title_acc`: labelled tasks whose extracted task (same position) has a title containing
//!   every title term;
//! - `outcome_acc`: labelled tasks whose extracted task has the labelled outcome, plus
//!   transcripts labelled `noop` that produced no memory;
//! - `pref_precision` / `pref_recall`: extracted preferences that contain the terms of some
//!   labelled one / labelled preferences some extracted one contains;
//! - `lesson_recall`: labelled lessons some extracted failure lesson contains.
//!
//! Terms match case-insensitively, ignoring backticks. `--verbose` prints every raw memory;
//! `--dir DIR` scores another folder of labelled transcripts (a subset, a new batch).
//! `fixtures/eval/extract/` is the set the engine was tuned on; `fixtures/eval/extract-held-back/`
//! and `-2` to `-5` were written and labelled before the engine ever ran on them and are never
//! tuned against, so `--dir fixtures/eval/extract-held-back` (or `-2` ... `-5`) measures unseen
//! sessions. The fifth has not been scored yet: it is for the next engine change, scored once.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use memory_offline::OfflineEngine;
use memory_protocol::ModelClient;
use memory_protocol::memory_format::{RawMemory, TaskOutcome, sections};
use memory_write::stage_one_request::{parse_stage_one_output, prepare_stage_one_request};
use memory_write::store::{ClaimedJob, WriteStore, now_unix};
use memory_write::{ScanOptions, StateStore, scan_rollouts};
use serde::Deserialize;

/// What a person says about one transcript.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Labels {
    /// Nothing in the session is worth remembering.
    #[serde(default)]
    noop: bool,
    #[serde(default)]
    task: Vec<TaskLabel>,
    #[serde(default)]
    preference: Vec<TermLabel>,
    #[serde(default)]
    lesson: Vec<TermLabel>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskLabel {
    /// The title a person would give (shown when the extracted one misses).
    title: String,
    /// Words any fitting title contains.
    title_terms: Vec<String>,
    outcome: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TermLabel {
    /// The item in a person's words.
    text: String,
    /// Words any extraction of it contains.
    terms: Vec<String>,
}

/// Running totals.
#[derive(Debug, Default)]
struct Score {
    transcripts: usize,
    titles: (usize, usize),
    outcomes: (usize, usize),
    pref_precision: (usize, usize),
    pref_recall: (usize, usize),
    lessons: (usize, usize),
}

pub(crate) fn run(args: &[&str]) -> Result<()> {
    let mut verbose = false;
    let mut dir = crate::project_root().join("fixtures/eval/extract");
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match *arg {
            "--verbose" => verbose = true,
            "--dir" => match rest.next() {
                Some(path) => dir = PathBuf::from(path),
                None => bail!("--dir needs a folder"),
            },
            other => bail!(
                "unexpected argument {other:?}; usage: cargo xtask eval extract [--verbose] [--dir DIR]"
            ),
        }
    }
    let home = tempfile::tempdir()?;
    let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    let store = StateStore::open_home(home.path())?;
    let scan = runtime
        .block_on(scan_rollouts(
            &store,
            &dir,
            &ScanOptions::default(),
            now_unix(),
        ))
        .with_context(|| format!("cannot scan {}", dir.display()))?;
    if !scan.unreadable.is_empty() {
        bail!("unreadable transcripts: {:?}", scan.unreadable);
    }
    let threads: BTreeMap<String, _> = runtime
        .block_on(store.threads())?
        .into_iter()
        .map(|thread| (thread.session.rollout_path.clone(), thread))
        .collect();
    let engine = OfflineEngine::new();
    let mut score = Score::default();
    let mut paths: Vec<PathBuf> = threads.keys().map(PathBuf::from).collect();
    paths.sort();
    for path in paths {
        let labels_path = path.with_extension("toml");
        let labels: Labels = toml::from_str(
            &std::fs::read_to_string(&labels_path)
                .with_context(|| format!("no labels for {}", path.display()))?,
        )
        .with_context(|| format!("bad labels in {}", labels_path.display()))?;
        let Some(thread) = threads.get(&path.display().to_string()) else {
            continue;
        };
        let memory = if thread.session.exclusion.is_some() {
            None
        } else {
            let job = ClaimedJob {
                thread_id: thread.session.id.clone(),
                rollout_path: thread.session.rollout_path.clone(),
                cwd: thread.session.cwd.clone(),
                open_path: PathBuf::from(&thread.session.rollout_path),
                owner_token: String::new(),
                input_watermark: thread.source_watermark,
                stored_items: None,
            };
            match prepare_stage_one_request(&job, engine.context_window())
                .map_err(anyhow::Error::msg)?
            {
                None => None,
                Some(rendered) => {
                    let response = runtime.block_on(engine.complete(rendered.request))?;
                    let output =
                        parse_stage_one_output(&response.text).map_err(anyhow::Error::msg)?;
                    (!output.is_no_output()).then_some(output.raw_memory)
                }
            }
        };
        let name = file_name(&path);
        if verbose {
            println!(
                "===== {name}\n{}",
                memory.as_deref().unwrap_or("(no memory)")
            );
        }
        for problem in score.add(&labels, memory.as_deref()) {
            println!("{name}: {problem}");
        }
    }
    if score.transcripts == 0 {
        bail!("no transcripts in {}", dir.display());
    }
    let ratio = |(hit, total): (usize, usize)| {
        if total == 0 {
            1.0
        } else {
            hit as f64 / total as f64
        }
    };
    println!(
        "{} transcripts: titles {}/{}, outcomes {}/{}, preferences {}/{} precise and {}/{} found, \
         lessons {}/{} found",
        score.transcripts,
        score.titles.0,
        score.titles.1,
        score.outcomes.0,
        score.outcomes.1,
        score.pref_precision.0,
        score.pref_precision.1,
        score.pref_recall.0,
        score.pref_recall.1,
        score.lessons.0,
        score.lessons.1,
    );
    println!(
        "EVAL extract transcripts={} title_acc={:.3} outcome_acc={:.3} pref_precision={:.3} \
         pref_recall={:.3} lesson_recall={:.3}",
        score.transcripts,
        ratio(score.titles),
        ratio(score.outcomes),
        ratio(score.pref_precision),
        ratio(score.pref_recall),
        ratio(score.lessons),
    );
    Ok(())
}

impl Score {
    /// Scores one transcript; returns what did not match, for the report.
    fn add(&mut self, labels: &Labels, raw_memory: Option<&str>) -> Vec<String> {
        self.transcripts += 1;
        let mut problems = Vec::new();
        let memory = raw_memory.map(RawMemory::parse).unwrap_or_default();
        if labels.noop {
            self.outcomes.1 += 1;
            if raw_memory.is_none() {
                self.outcomes.0 += 1;
            } else {
                problems.push("expected no memory, got one".to_owned());
            }
        }
        for (index, label) in labels.task.iter().enumerate() {
            let task = memory.tasks.get(index);
            self.titles.1 += 1;
            self.outcomes.1 += 1;
            let title = task.map_or("", |t| t.title.as_str());
            if label.title_terms.iter().all(|term| contains(title, term)) {
                self.titles.0 += 1;
            } else {
                problems.push(format!(
                    "task {}: title {title:?} lacks {:?} (a person: {:?})",
                    index + 1,
                    label.title_terms,
                    label.title
                ));
            }
            let expected = TaskOutcome::parse(&label.outcome);
            let got = task.and_then(|t| t.outcome);
            if expected.is_some() && got == expected {
                self.outcomes.0 += 1;
            } else {
                problems.push(format!(
                    "task {}: outcome {} expected {}",
                    index + 1,
                    got.map_or("none", TaskOutcome::as_str),
                    label.outcome
                ));
            }
        }
        if memory.tasks.len() > labels.task.len() {
            problems.push(format!(
                "{} task(s) extracted, {} labelled",
                memory.tasks.len(),
                labels.task.len()
            ));
        }
        let preferences: Vec<&String> = memory
            .tasks
            .iter()
            .flat_map(|t| t.items(sections::PREFERENCE_SIGNALS))
            .collect();
        for preference in &preferences {
            self.pref_precision.1 += 1;
            if labels
                .preference
                .iter()
                .any(|label| matches(preference, &label.terms))
            {
                self.pref_precision.0 += 1;
            } else {
                problems.push(format!("unlabelled preference {preference:?}"));
            }
        }
        for label in &labels.preference {
            self.pref_recall.1 += 1;
            if preferences.iter().any(|p| matches(p, &label.terms)) {
                self.pref_recall.0 += 1;
            } else {
                problems.push(format!("missed preference {:?}", label.text));
            }
        }
        let lessons: Vec<&String> = memory
            .tasks
            .iter()
            .flat_map(|t| t.items(sections::FAILURES))
            .collect();
        for label in &labels.lesson {
            self.lessons.1 += 1;
            if lessons.iter().any(|l| matches(l, &label.terms)) {
                self.lessons.0 += 1;
            } else {
                problems.push(format!("missed lesson {:?}", label.text));
            }
        }
        problems
    }
}

fn matches(text: &str, terms: &[String]) -> bool {
    !terms.is_empty() && terms.iter().all(|term| contains(text, term))
}

fn contains(text: &str, term: &str) -> bool {
    let normalize = |s: &str| s.replace('`', "").to_lowercase();
    normalize(text).contains(&normalize(term))
}

fn file_name(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(text: &str) -> Labels {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn scoring_counts_hits_and_misses() {
        let labels = labels(
            "[[task]]\ntitle = \"Fix the cache race\"\ntitle_terms = [\"cache\", \"race\"]\noutcome = \"success\"\n\
             [[preference]]\ntext = \"Never push to main\"\nterms = [\"push\", \"main\"]\n\
             [[lesson]]\ntext = \"Lock in Set\"\nterms = [\"cache.go\"]\n",
        );
        let raw = "---\ntask: x\n---\n### Task 1: Fix the `cache` race\ntask_outcome: partial\n\n\
                   Preference signals:\n- Never push to MAIN directly.\n- Use tabs.\n\n\
                   Failures and how to do differently:\n- `go test` failed; passed after changing cache.go.\n";
        let mut score = Score::default();
        let problems = score.add(&labels, Some(raw));
        assert_eq!(score.titles, (1, 1));
        assert_eq!(score.outcomes, (0, 1));
        assert_eq!(score.pref_precision, (1, 2));
        assert_eq!(score.pref_recall, (1, 1));
        assert_eq!(score.lessons, (1, 1));
        assert_eq!(problems.len(), 2, "{problems:?}");
        let noop = labels_noop();
        let mut score = Score::default();
        score.add(&noop, None);
        assert_eq!(score.outcomes, (1, 1));
    }

    fn labels_noop() -> Labels {
        labels("noop = true\n")
    }

    /// Checks that every transcript in `folder` has labels the scorer accepts and is made of
    /// JSON lines; returns how many transcripts the folder holds.
    fn check_folder(folder: &str) -> usize {
        let dir = crate::project_root().join(folder);
        let mut count = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "jsonl") {
                let labels: Labels =
                    toml::from_str(&std::fs::read_to_string(path.with_extension("toml")).unwrap())
                        .unwrap();
                assert!(labels.noop || !labels.task.is_empty(), "{}", path.display());
                for task in &labels.task {
                    assert!(
                        TaskOutcome::parse(&task.outcome).is_some(),
                        "{}",
                        path.display()
                    );
                    assert!(!task.title_terms.is_empty(), "{}", path.display());
                }
                for item in labels.preference.iter().chain(&labels.lesson) {
                    assert!(!item.terms.is_empty(), "{}", path.display());
                }
                for (number, line) in std::fs::read_to_string(&path).unwrap().lines().enumerate() {
                    let parsed: Result<serde_json::Value, _> = serde_json::from_str(line);
                    assert!(parsed.is_ok(), "{}:{}", path.display(), number + 1);
                }
                count += 1;
            }
        }
        count
    }

    #[test]
    fn every_fixture_has_valid_labels() {
        let count = check_folder("fixtures/eval/extract");
        assert!(count >= 20, "{count} transcripts");
    }

    #[test]
    fn every_held_back_fixture_has_valid_labels() {
        let folders = [
            ("extract-held-back", 30),
            ("extract-held-back-2", 20),
            ("extract-held-back-3", 20),
            ("extract-held-back-4", 20),
            ("extract-held-back-5", 20),
        ];
        for (folder, at_least) in folders {
            let count = check_folder(&format!("fixtures/eval/{folder}"));
            assert!(count >= at_least, "{folder}: {count} transcripts");
        }
    }
}
