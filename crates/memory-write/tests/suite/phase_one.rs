//! Phase 1 end to end with a scripted model: outcomes, redaction, truncation, limits, the
//! rate-limit guard and broken rollout files.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use memory_protocol::stage_one::{JobStatus, StageOneInput};
use memory_protocol::{ModelError, StageOneOutput, TaskKind};
use memory_write::RateLimitProbe;
use memory_write::phase_one::{JobOutcome, PhaseOneHooks};
use memory_write::stage_one_request::parse_stage_one_output;
use memory_write::store::{ClaimParams, SharedStore, WriteStore, now_unix};
use memory_write::{
    PhaseOneOptions, PhaseOneReport, ScanOptions, StateStore, run_phase_one, scan_rollouts,
};

use super::fake_model::{Answer, FakeModel, all_files, write_rollouts};
use super::scan::{copy_tree, examples_dir};

/// Credentials planted in `examples/rollouts`; none may reach a model or the state store.
pub(crate) const PLANTED_SECRETS: [&str; 7] = [
    "sk-proj-EXAMPLEonlyNotARealKey0123456789abcdefghijklmnopqrstuvwxyzAB",
    "AKIAIOSFODNN7EXAMPLE",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "ghp_EXAMPLEfakeTokenForDocs0123456789abc",
    "EXAMPLE-not-a-real-pass-42",
    "xoxb-000000000000-0000000000000-EXAMPLEfakeSlackBotToken0",
    "EXAMPLEfakeSlackBotToken0",
];

fn options() -> PhaseOneOptions {
    PhaseOneOptions {
        claim: ClaimParams {
            min_idle_hours: 1,
            max_age_days: None,
            ..ClaimParams::default()
        },
        max_claims: None,
        ..PhaseOneOptions::default()
    }
}

async fn run(
    home: &std::path::Path,
    rollouts: &std::path::Path,
    model: Arc<FakeModel>,
    options: &PhaseOneOptions,
) -> PhaseOneReport {
    let store = StateStore::open_home(home).unwrap();
    scan_rollouts(&store, rollouts, &ScanOptions::default(), now_unix())
        .await
        .unwrap();
    let store: SharedStore = Arc::new(store);
    run_phase_one(&store, model, options, PhaseOneHooks::default())
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_examples_are_extracted_once_and_no_planted_secret_reaches_the_model_or_the_store() {
    let home = tempfile::tempdir().unwrap();
    let model = Arc::new(FakeModel::new(Answer::Echo));
    let report = run(home.path(), &examples_dir(), Arc::clone(&model), &options()).await;
    // Six files; the `exec` session is never extracted; small talk has nothing to keep.
    assert_eq!(report.claimed, 5, "{report:#?}");
    assert_eq!(report.succeeded, 4, "{report:#?}");
    assert_eq!(report.no_output, 1, "{report:#?}");
    assert_eq!(report.failed, 0);
    assert_eq!(report.token_usage.unwrap().input_tokens, 500);

    let requests = model.requests();
    assert_eq!(requests.len(), 5);
    for request in &requests {
        assert_eq!(request.task, TaskKind::StageOneExtraction);
        assert_eq!(
            request.reasoning_effort, None,
            "the model's configuration decides the effort; many models refuse the field"
        );
        assert_eq!(request.output_schema, Some(StageOneOutput::output_schema()));
        let structured = request.structured_input.to_string();
        for text in [&request.instructions, &request.input, &structured] {
            for secret in PLANTED_SECRETS {
                assert!(!text.contains(secret), "`{secret}` reached the model");
            }
            assert!(
                !text.contains("<INSTRUCTIONS>"),
                "AGENTS.md reached the model"
            );
            assert!(
                !text.contains("permissions instructions"),
                "developer message"
            );
            assert!(!text.contains("gAAAAAB"), "encrypted reasoning");
        }
        let input: StageOneInput =
            serde_json::from_value(request.structured_input.clone()).unwrap();
        assert!(!input.truncated);
        assert!(request.input.contains(&input.rollout_path));
    }

    let store = StateStore::open_home(home.path()).unwrap();
    let outputs = store.stage_one_outputs().await.unwrap();
    assert_eq!(outputs.len(), 4);
    assert!(
        outputs
            .iter()
            .all(|o| o.raw_memory.starts_with("memory of "))
    );
    drop(store);
    assert_no_secret_under(home.path());

    // A second run finds nothing new to do.
    let again = run(home.path(), &examples_dir(), Arc::clone(&model), &options()).await;
    assert_eq!((again.candidates, again.claimed), (0, 0));
    assert_eq!(model.requests().len(), 5);
}

/// Every file under `dir` (the SQLite file and its WAL included) is free of planted secrets.
pub(crate) fn assert_no_secret_under(dir: &std::path::Path) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            assert_no_secret_under(&path);
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        for secret in PLANTED_SECRETS {
            assert!(
                !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
                "`{secret}` found in {}",
                path.display()
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_in_the_model_output_are_redacted_before_storage() {
    let home = tempfile::tempdir().unwrap();
    let rollouts = tempfile::tempdir().unwrap();
    let ids = write_rollouts(rollouts.path(), 1);
    let leaked = serde_json::json!({
        "raw_memory": "use token ghp_EXAMPLEfakeTokenForDocs0123456789abc for pushes",
        "rollout_summary": "# pushed with AKIAIOSFODNN7EXAMPLE",
        "rollout_slug": "xoxb-000000000000-0000000000000-EXAMPLEfakeSlackBotToken0",
    });
    let model = Arc::new(FakeModel::new(Answer::Raw(leaked.to_string())));
    let report = run(home.path(), rollouts.path(), model, &options()).await;
    assert_eq!(report.succeeded, 1, "{report:#?}");
    let store = StateStore::open_home(home.path()).unwrap();
    let output = store.stage_one_output(&ids[0]).await.unwrap().unwrap();
    assert!(
        output.raw_memory.contains(memory_protocol::REDACTED_SECRET),
        "{output:?}"
    );
    assert!(
        output
            .rollout_summary
            .contains(memory_protocol::REDACTED_SECRET)
    );
    drop(store);
    assert_no_secret_under(home.path());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_output_and_model_errors_fail_the_job_with_a_clear_message() {
    let rollouts = tempfile::tempdir().unwrap();
    let ids = write_rollouts(rollouts.path(), 1);
    for (answer, expected) in [
        (
            Answer::Raw(r#"{"raw_memory":"x","rollout_summary":"y","extra":1}"#.to_owned()),
            "invalid model output: not a valid stage-one output: unknown field `extra`",
        ),
        (
            Answer::Raw("Sure! Here is the JSON".to_owned()),
            "invalid model output: not a valid stage-one output",
        ),
        (
            Answer::Error(ModelError::ContextOverflow {
                message: "too long".to_owned(),
            }),
            "the rollout does not fit the model's context window even cut to",
        ),
    ] {
        let home = tempfile::tempdir().unwrap();
        let model = Arc::new(FakeModel::new(answer));
        let report = run(home.path(), rollouts.path(), model, &options()).await;
        assert_eq!(report.failed, 1, "{report:#?}");
        let message = report.jobs[0].message.clone().unwrap();
        assert!(message.starts_with(expected), "{message}");
        let store = StateStore::open_home(home.path()).unwrap();
        let job = store.stage_one_job(&ids[0]).await.unwrap().unwrap();
        assert_eq!(job.status, JobStatus::Error);
        assert_eq!(job.attempts, 1);
        assert_eq!(job.last_error.as_deref(), Some(message.as_str()));
        assert_eq!(store.stage_one_outputs().await.unwrap(), vec![]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_limit_retry_after_longer_than_the_back_off_is_respected() {
    let home = tempfile::tempdir().unwrap();
    let rollouts = tempfile::tempdir().unwrap();
    let ids = write_rollouts(rollouts.path(), 1);
    let model = Arc::new(FakeModel::new(Answer::Error(ModelError::RateLimited {
        retry_after_ms: Some(7_200_000),
        message: "slow down".to_owned(),
    })));
    let before = now_unix();
    run(home.path(), rollouts.path(), model, &options()).await;
    let store = StateStore::open_home(home.path()).unwrap();
    let retry_at = store
        .stage_one_job(&ids[0])
        .await
        .unwrap()
        .unwrap()
        .retry_after_at
        .unwrap();
    assert!(retry_at >= before + 7200 && retry_at <= now_unix() + 7200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contents_are_truncated_to_seventy_percent_of_the_effective_window() {
    use memory_protocol::input_token_budget;
    assert_eq!(input_token_budget(None), 150_000);
    assert_eq!(input_token_budget(Some(0)), 150_000);
    assert_eq!(input_token_budget(Some(272_000)), 180_880);
    assert_eq!(input_token_budget(Some(1)), 1);

    let home = tempfile::tempdir().unwrap();
    let rollouts = tempfile::tempdir().unwrap();
    copy_tree(&examples_dir().join("2025/11/03"), rollouts.path());
    let mut model = FakeModel::new(Answer::Echo);
    model.window = Some(400);
    let model = Arc::new(model);
    run(home.path(), rollouts.path(), Arc::clone(&model), &options()).await;
    let requests = model.requests();
    assert_eq!(requests.len(), 1);
    let input: StageOneInput =
        serde_json::from_value(requests[0].structured_input.clone()).unwrap();
    assert!(input.truncated);
    let full = memory_transcript::serialize_for_memory(&input.items);
    assert!(
        requests[0].input.len() < full.len(),
        "the prompt holds a cut serialization"
    );
    let counted =
        memory_sanitize::TokenCounter::count(memory_sanitize::o200k(), &requests[0].input);
    assert!(
        counted < 400 * 2,
        "prompt of {counted} tokens for a 266-token budget"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limits_and_concurrency_are_respected() {
    let home = tempfile::tempdir().unwrap();
    let rollouts = tempfile::tempdir().unwrap();
    write_rollouts(rollouts.path(), 30);
    let mut model = FakeModel::new(Answer::Echo);
    model.delay = Duration::from_millis(20);
    let model = Arc::new(model);
    let limited = PhaseOneOptions {
        max_claims: Some(12),
        ..options()
    };
    let report = run(home.path(), rollouts.path(), Arc::clone(&model), &limited).await;
    assert_eq!(
        (report.candidates, report.claimed, report.succeeded),
        (30, 12, 12)
    );
    let peak = model
        .max_in_flight
        .load(std::sync::atomic::Ordering::SeqCst);
    assert!((2..=8).contains(&peak), "peak in flight {peak}");

    let rest = run(home.path(), rollouts.path(), Arc::clone(&model), &options()).await;
    assert_eq!((rest.candidates, rest.claimed), (18, 18));
}

struct Remaining(Option<f64>);

#[async_trait]
impl RateLimitProbe for Remaining {
    async fn remaining_percent(&self) -> Option<f64> {
        self.0
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn too_little_rate_limit_skips_the_run() {
    let home = tempfile::tempdir().unwrap();
    let rollouts = tempfile::tempdir().unwrap();
    write_rollouts(rollouts.path(), 2);
    let store = StateStore::open_home(home.path()).unwrap();
    scan_rollouts(&store, rollouts.path(), &ScanOptions::default(), now_unix())
        .await
        .unwrap();
    let store: SharedStore = Arc::new(store);
    let model = Arc::new(FakeModel::new(Answer::Echo));
    let low = Remaining(Some(24.9));
    let hooks = PhaseOneHooks {
        rate_limit: Some(&low),
        observer: None,
    };
    let report = run_phase_one(&store, model.clone(), &options(), hooks)
        .await
        .unwrap();
    assert!(report.skipped_rate_limit);
    assert_eq!(report.claimed, 0);
    assert!(model.requests().is_empty());

    let enough = Remaining(Some(25.0));
    let hooks = PhaseOneHooks {
        rate_limit: Some(&enough),
        observer: None,
    };
    let report = run_phase_one(&store, model, &options(), hooks)
        .await
        .unwrap();
    assert!(!report.skipped_rate_limit);
    assert_eq!(report.succeeded, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn empty_garbage_and_truncated_rollouts_end_as_no_output_or_error_while_others_succeed() {
    let home = tempfile::tempdir().unwrap();
    let rollouts = tempfile::tempdir().unwrap();
    let good = write_rollouts(rollouts.path(), 3);
    let broken = rollouts.path().join("broken");
    std::fs::create_dir(&broken).unwrap();
    std::fs::write(broken.join("empty.jsonl"), "").unwrap();
    std::fs::write(
        broken.join("garbage.jsonl"),
        "\u{1}\u{2} not json at all\n}{\n",
    )
    .unwrap();
    let example =
        std::fs::read_to_string(examples_dir().join(
            "2025/11/05/rollout-2025-11-05T08-47-03-019a5733-0b9e-7f52-8c66-1d2e3f4a5003.jsonl",
        ))
        .unwrap();
    // Cut inside the first line: nothing readable is left.
    std::fs::write(broken.join("cut-early.jsonl"), &example[..120]).unwrap();
    // Cut inside a later line: the readable lines before the cut still carry the session.
    let cut = example.len() / 2;
    let cut = (0..=cut)
        .rev()
        .find(|i| example.is_char_boundary(*i))
        .unwrap();
    std::fs::write(broken.join("cut-late.jsonl"), &example[..cut]).unwrap();

    // Files without a readable timestamp are as idle as their modification time says.
    for entry in std::fs::read_dir(&broken).unwrap() {
        let file = std::fs::File::options()
            .append(true)
            .open(entry.unwrap().path())
            .unwrap();
        let two_days = Duration::from_secs(2 * 86_400);
        file.set_modified(std::time::SystemTime::now() - two_days)
            .unwrap();
    }
    let model = Arc::new(FakeModel::new(Answer::Echo));
    let report = run(home.path(), rollouts.path(), model, &options()).await;
    let outcome = |name: &str| {
        report
            .jobs
            .iter()
            .find(|job| job.rollout_path.ends_with(name))
            .map(|job| (job.outcome, job.message.clone().unwrap_or_default()))
            .unwrap()
    };
    assert_eq!(
        outcome("empty.jsonl"),
        (JobOutcome::NoOutput, "the rollout file is empty".to_owned())
    );
    let (garbage, message) = outcome("garbage.jsonl");
    assert_eq!(garbage, JobOutcome::Failed);
    assert!(
        message.contains("no readable lines (2 malformed; first: line 1"),
        "{message}"
    );
    let (early, message) = outcome("cut-early.jsonl");
    assert_eq!(early, JobOutcome::Failed);
    assert!(
        message.contains("no readable lines (1 malformed"),
        "{message}"
    );
    assert_eq!(outcome("cut-late.jsonl").0, JobOutcome::Succeeded);
    for id in &good {
        let job = report.jobs.iter().find(|j| &j.thread_id == id).unwrap();
        assert_eq!(job.outcome, JobOutcome::Succeeded);
    }
    assert_eq!(report.claimed, 7);
}

#[test]
fn parse_stage_one_output_is_strict() {
    assert!(parse_stage_one_output(r#"{"raw_memory":"a","rollout_summary":"b"}"#).is_ok());
    assert!(parse_stage_one_output(r#"{"raw_memory":"a"}"#).is_err());
    assert!(parse_stage_one_output(r#"{"raw_memory":1,"rollout_summary":"b"}"#).is_err());
    assert!(parse_stage_one_output("```json\n{}\n```").is_err());
}

proptest::proptest! {
    #[test]
    fn parse_stage_one_output_never_panics_and_never_returns_a_self_evident_secret(
        text in ".{0,300}",
        secret_index in proptest::sample::select(vec![0usize, 1, 3, 5]),
        field in 0usize..3,
    ) {
        let _ = parse_stage_one_output(&text);
        let secret = PLANTED_SECRETS[secret_index];
        let mut fields = [text.clone(), text.clone(), text.clone()];
        fields[field] = format!("{text} {secret} {text}");
        let json = serde_json::json!({
            "raw_memory": fields[0], "rollout_summary": fields[1], "rollout_slug": fields[2],
        });
        let output = parse_stage_one_output(&json.to_string()).unwrap();
        let all = format!("{}{}{:?}", output.raw_memory, output.rollout_summary, output.rollout_slug);
        proptest::prop_assert!(!all.contains(secret));
    }
}

/// One line of a generated rollout: a valid line with a planted secret, or junk.
fn arbitrary_line() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    prop_oneof![
        ".{0,80}".prop_map(|text| {
            let line = serde_json::json!({
                "timestamp": "2025-10-01T00:00:00.000Z",
                "type": "response_item",
                "payload": {"type": "message", "role": "user", "content": [
                    {"type": "input_text", "text": format!("{text} key ghp_EXAMPLEfakeTokenForDocs0123456789abc {text}")}
                ]}
            });
            line.to_string()
        }),
        ".{0,80}".prop_map(|text| {
            serde_json::json!({
                "timestamp": "2025-10-01T00:00:01.000Z",
                "type": "response_item",
                "payload": {"type": "function_call", "name": "exec_command", "call_id": "c",
                    "arguments": serde_json::json!({"cmd": format!("curl -H 'Authorization: Bearer sk-proj-EXAMPLEonlyNotARealKey0123456789abcdefghijklmnopqrstuvwxyzAB' {text}")}).to_string()}
            })
            .to_string()
        }),
        ".{0,120}",
        (0usize..200).prop_map(|cut| {
            let line = r#"{"timestamp":"2025-10-01T00:00:00.000Z","type":"session_meta","payload":{"id":"x","source":"cli"}}"#;
            line[..cut.min(line.len())].to_owned()
        }),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    #[test]
    fn preparing_any_rollout_never_panics_and_never_leaks_a_planted_secret(
        lines in proptest::collection::vec(arbitrary_line(), 0..12)
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        std::fs::write(&path, lines.join("\n")).unwrap();
        let job = memory_write::store::ClaimedJob {
            thread_id: "t".to_owned(),
            rollout_path: path.to_string_lossy().into_owned(),
            open_path: path.clone(),
            cwd: None,
            owner_token: "o".to_owned(),
            input_watermark: 1,
            stored_items: None,
        };
        // What a shared store would hold of it, and the same job extracted from that.
        if let Ok(loaded) = memory_write::stage_one_request::load_rollout(&path) {
            let stored = memory_write::stage_one_request::stored_items(&loaded).unwrap();
            for secret in [PLANTED_SECRETS[0], PLANTED_SECRETS[3]] {
                proptest::prop_assert!(!stored.contains(secret));
            }
            let from_store = memory_write::store::ClaimedJob {
                stored_items: Some(stored),
                ..job.clone()
            };
            let direct = memory_write::stage_one_request::prepare_stage_one_request(&job, Some(2_000));
            let shared = memory_write::stage_one_request::prepare_stage_one_request(&from_store, Some(2_000));
            proptest::prop_assert_eq!(
                direct.unwrap().map(|r| r.request),
                shared.unwrap().map(|r| r.request)
            );
        }
        match memory_write::stage_one_request::prepare_stage_one_request(&job, Some(2_000)) {
            Ok(Some(rendered)) => {
                let request = rendered.request;
                let structured = request.structured_input.to_string();
                for secret in [PLANTED_SECRETS[0], PLANTED_SECRETS[3]] {
                    proptest::prop_assert!(!request.input.contains(secret));
                    proptest::prop_assert!(!structured.contains(secret));
                }
            }
            Ok(None) => {}
            Err(error) => {
                let message = error.to_string();
                proptest::prop_assert!(message.contains("no readable lines"), "{}", message);
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_context_overflow_answer_leads_to_a_smaller_request_and_never_the_same_twice() {
    let home = tempfile::tempdir().unwrap();
    let rollouts = tempfile::tempdir().unwrap();
    write_rollouts(rollouts.path(), 1);
    // One long tool output, so cutting the transcript shortens the prompt.
    let file = all_files(rollouts.path()).remove(0);
    let log: String = (0..6_000)
        .map(|i| format!("line {i} of the build log\\n"))
        .collect();
    let mut text = std::fs::read_to_string(&file).unwrap();
    text = text.replace(r#""output":"ok""#, &format!(r#""output":"{log}""#));
    std::fs::write(&file, text).unwrap();
    // Measure the prompt a roomy model gets, then refuse anything longer than 30% of it.
    let probe = Arc::new(FakeModel::new(Answer::Echo));
    run(home.path(), rollouts.path(), Arc::clone(&probe), &options()).await;
    let full = probe.requests()[0].input.len();
    let home = tempfile::tempdir().unwrap();
    let model = Arc::new(FakeModel::new(Answer::OverflowAbove(full * 3 / 10)));
    let report = run(home.path(), rollouts.path(), Arc::clone(&model), &options()).await;
    assert_eq!(report.succeeded, 1, "{report:#?}");
    let sizes: Vec<usize> = model.requests().iter().map(|r| r.input.len()).collect();
    assert!(sizes.len() >= 2, "{sizes:?}");
    for pair in sizes.windows(2) {
        assert!(
            pair[1] < pair[0],
            "each request is smaller than the last: {sizes:?}"
        );
    }
    let last: StageOneInput =
        serde_json::from_value(model.requests().last().unwrap().structured_input.clone()).unwrap();
    assert!(last.truncated);
    let store = StateStore::open_home(home.path()).unwrap();
    let job = store.stage_one_jobs().await.unwrap().remove(0);
    assert_eq!(
        job.attempts, 0,
        "a request that fit after cutting spends no attempt"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fatal_model_error_stops_the_run_and_gives_every_job_back_unspent() {
    let home = tempfile::tempdir().unwrap();
    let rollouts = tempfile::tempdir().unwrap();
    write_rollouts(rollouts.path(), 20);
    let rejected = Arc::new(FakeModel::new(Answer::Error(ModelError::Authentication {
        message: "http 401: invalid api key".to_owned(),
    })));
    let report = run(
        home.path(),
        rollouts.path(),
        Arc::clone(&rejected),
        &options(),
    )
    .await;
    assert_eq!(report.succeeded + report.failed, 0, "{report:#?}");
    assert!(report.released >= 1 && report.released <= 8, "{report:#?}");
    assert_eq!(
        report.claimed, report.released,
        "claims stop at the first fatal error"
    );
    assert!(
        report
            .fatal_error
            .as_deref()
            .unwrap()
            .contains("invalid api key"),
        "{report:#?}"
    );
    let store = StateStore::open_home(home.path()).unwrap();
    for job in store.stage_one_jobs().await.unwrap() {
        assert_eq!(job.status, JobStatus::Pending, "{job:?}");
        assert_eq!(job.attempts, 0, "{job:?}");
        assert_eq!(job.retry_after_at, None, "{job:?}");
    }
    drop(store);
    // With the key fixed, the very next run does all the work.
    let fixed = Arc::new(FakeModel::new(Answer::Echo));
    let report = run(home.path(), rollouts.path(), fixed, &options()).await;
    assert_eq!(report.succeeded, 20, "{report:#?}");
    assert_eq!(report.fatal_error, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_models_rate_limit_headers_stop_claiming_below_the_minimum() {
    let home = tempfile::tempdir().unwrap();
    let rollouts = tempfile::tempdir().unwrap();
    write_rollouts(rollouts.path(), 10);
    let mut model = FakeModel::new(Answer::Echo);
    model.rate_limit = Some(memory_protocol::RateLimitSnapshot {
        limit_requests: Some(1_000),
        remaining_requests: Some(40),
        ..Default::default()
    });
    let gated = PhaseOneOptions {
        min_rate_limit_remaining_percent: 25,
        ..options()
    };
    let report = run(home.path(), rollouts.path(), Arc::new(model), &gated).await;
    assert_eq!(report.claimed, 0, "{report:#?}");
    assert_eq!(report.stopped_at_rate_limit, Some(4.0));
    // The same quota passes a lower minimum.
    let mut model = FakeModel::new(Answer::Echo);
    model.rate_limit = Some(memory_protocol::RateLimitSnapshot {
        limit_requests: Some(1_000),
        remaining_requests: Some(40),
        ..Default::default()
    });
    let lenient = PhaseOneOptions {
        min_rate_limit_remaining_percent: 3,
        ..options()
    };
    let report = run(home.path(), rollouts.path(), Arc::new(model), &lenient).await;
    assert_eq!(report.succeeded, 10, "{report:#?}");
    assert_eq!(report.stopped_at_rate_limit, None);
}

/// Items stored by another machine (perhaps an older build whose rules caught less) are
/// redacted again before anything of them reaches a model, in the prompt and in the
/// structured input alike.
#[test]
fn stored_items_from_another_machine_are_redacted_again() {
    let secret = PLANTED_SECRETS[0];
    let items = serde_json::json!([
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": format!("deploy with {secret} please")}],
        },
        {
            "type": "function_call",
            "name": "exec_command",
            "arguments": format!("{{\"cmd\":\"export OPENAI_API_KEY={secret}\"}}"),
            "call_id": "c1",
        },
    ])
    .to_string();
    let job = memory_write::store::ClaimedJob {
        thread_id: "t".to_owned(),
        rollout_path: "/elsewhere/t.jsonl".to_owned(),
        open_path: std::path::PathBuf::from("/elsewhere/t.jsonl"),
        cwd: None,
        owner_token: "o".to_owned(),
        input_watermark: 1,
        stored_items: Some(items),
    };
    let rendered = memory_write::stage_one_request::prepare_stage_one_request(&job, Some(100_000))
        .unwrap()
        .unwrap();
    assert!(!rendered.request.input.contains(secret));
    let structured = rendered.request.structured_input.to_string();
    assert!(!structured.contains(secret), "{structured}");
    assert!(structured.contains("deploy with"), "{structured}");
}
