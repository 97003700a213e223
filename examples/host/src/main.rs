//! `reference-host --script FILE --home DIR`: runs a scripted session offline and prints one
//! line, `HOST requests=N compactions=N goal=STATUS memories=N violations=N`. Each violation
//! is printed on stderr first. Exit code 1 when the run failed, 2 when an invariant broke.
//!
//! With `--base-url URL` the model's replies come from an OpenAI-compatible server (Chat
//! Completions with tools) instead of the script, which then supplies the user's side only;
//! `OPENAI_API_KEY`, when set, is sent as the bearer token.
//!
//! With `--context working-memory` the host commits the older messages into a working memory
//! at the threshold instead of compacting them; `compactions=N` then counts the commits.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use reference_host::chat::ChatModel;
use reference_host::{ContextStrategy, Host, HostOptions, Script, ScriptedModel};

/// Runs the reference host.
#[derive(Debug, Parser)]
#[command(name = "reference-host", version)]
struct Args {
    /// The JSON script to replay.
    #[arg(long)]
    script: PathBuf,
    /// Where projects, memory homes and rollouts are written (created if missing).
    #[arg(long)]
    home: PathBuf,
    /// An OpenAI-compatible server (`http://127.0.0.1:8080/v1`) that answers instead of the
    /// script's replies.
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
    /// The model to ask at `--base-url`.
    #[arg(long, default_value = "default", requires = "base_url")]
    model: String,
    /// What happens when the conversation crosses its threshold: `compaction` (a summary
    /// replaces the older messages) or `working-memory` (they are committed into the
    /// session's working memory). Overrides the script's `context`; the default is
    /// `compaction`.
    #[arg(long, value_name = "STRATEGY")]
    context: Option<ContextStrategy>,
    /// Write the first request sent after the third compaction to this file, as a Chat
    /// Completions body.
    #[arg(long, value_name = "FILE")]
    save_request_after_third_compaction: Option<PathBuf>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("reference-host: {error}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let text = std::fs::read_to_string(&args.script)
        .map_err(|error| format!("{}: {error}", args.script.display()))?;
    let script = Script::from_json(&text)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let mut options = HostOptions::for_script(&script, &args.home);
    if let Some(context) = args.context {
        options.context = context;
    }
    let report = match &args.base_url {
        Some(url) => {
            let key = std::env::var("OPENAI_API_KEY")
                .ok()
                .filter(|key| !key.is_empty());
            let model = ChatModel::new(url, &args.model, key)?;
            runtime.block_on(Host::new(options, model).run_script(&script))?
        }
        None => {
            let model = ScriptedModel::new(script.replies());
            runtime.block_on(Host::new(options, model).run_script(&script))?
        }
    };
    for violation in &report.violations {
        eprintln!(
            "violation {} (session {}, request {}): {}",
            violation.seam.as_str(),
            violation.session,
            violation
                .request
                .map_or_else(|| "-".to_owned(), |n| n.to_string()),
            violation.detail
        );
    }
    if let Some(path) = &args.save_request_after_third_compaction {
        let body = report
            .after_third_compaction
            .as_ref()
            .map(|request| request.chat_body())
            .ok_or("the run compacted fewer than three times")?;
        std::fs::write(path, serde_json::to_string_pretty(&body)?)
            .map_err(|error| format!("{}: {error}", path.display()))?;
    }
    println!("{}", report.line());
    Ok(if report.violations.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}
