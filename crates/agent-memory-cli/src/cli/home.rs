//! What every command that works on a home shares: its options, finding the home, loading
//! its config, and starting the async runtime.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use agent_memory::config::Config;
use agent_memory::models::config::{ModelConfig, parse_reasoning_effort};
use agent_memory::models::{BuiltModel, DEFAULT_MODEL_SPEC, ModelOptions, ModelSpec, build_model};
use agent_memory::offline::OfflineEngine;
use agent_memory::protocol::model::ReasoningEffort;
use agent_memory::write::config::{MemoriesConfig, StoreConfig};
use anyhow::{Context, bail};

/// Environment variable naming the agent-memory home.
pub(crate) const HOME_ENV: &str = "AGENT_MEMORY_HOME";
/// Folder under the user's home directory used when neither `--home` nor the environment
/// names one.
pub(crate) const DEFAULT_HOME: &str = ".agent-memory";
/// Config file looked for in the home when `--config` is not given.
pub(crate) const CONFIG_FILE_NAME: &str = "config.toml";

/// The options of every command that runs the write path.
#[derive(Debug, clap::Args)]
pub(crate) struct CommonArgs {
    /// agent-memory home (default: $AGENT_MEMORY_HOME, else ~/.agent-memory).
    #[arg(long)]
    pub(crate) home: Option<PathBuf>,
    /// Model: `offline` (built in, no network), `openai:NAME` or `openai-chat:NAME`.
    #[arg(long)]
    pub(crate) model: Option<String>,
    /// Base URL of an OpenAI-compatible server, for an HTTP model (default: $OPENAI_BASE_URL,
    /// else https://api.openai.com/v1).
    #[arg(long)]
    pub(crate) base_url: Option<String>,
    /// Config file with a `[memories]` table (default: `<home>/config.toml` when present).
    #[arg(long)]
    pub(crate) config: Option<PathBuf>,
    /// The model's context window in tokens (default: the config's `model_context_window`,
    /// else what the server reports, else a table of known models, else unknown).
    #[arg(long, value_parser = at_least(1))]
    pub(crate) context_window: Option<u64>,
    /// Reasoning effort to send: minimal, low, medium or high (default: the config's
    /// `model_reasoning_effort`, else none is sent).
    #[arg(long, value_parser = parse_effort)]
    pub(crate) reasoning_effort: Option<ReasoningEffort>,
    /// Limit on one HTTP request to the model, in seconds (default 300).
    #[arg(long, value_parser = at_least(1))]
    pub(crate) request_timeout: Option<u64>,
}

/// A parser for a whole number of at least `min`, whose refusal says so in plain words (clap's
/// own range check prints the range up to `u64::MAX`).
pub(crate) fn at_least(min: u64) -> impl Fn(&str) -> Result<u64, String> + Clone + Send + Sync {
    move |text: &str| match text.trim().parse::<u64>() {
        Ok(value) if value >= min => Ok(value),
        Ok(_) => Err(format!("must be at least {min}, found {text}")),
        Err(_) => Err(format!("`{text}` is not a whole number (at least {min})")),
    }
}

fn parse_effort(text: &str) -> Result<ReasoningEffort, String> {
    parse_reasoning_effort(text)
        .ok_or_else(|| format!("`{text}` is not one of minimal, low, medium, high"))
}

/// The environment variable naming the OpenAI-compatible server when `--base-url` does not,
/// as OpenAI's own clients read it.
pub(crate) const BASE_URL_ENV: &str = "OPENAI_BASE_URL";

impl CommonArgs {
    /// The model `--model` names, else `fallback` (a config key), else the default, built with
    /// the flags over the config file's model keys (`<home>/config.toml` or `--config`).
    pub(crate) fn build_model(
        &self,
        runtime: &tokio::runtime::Runtime,
        fallback: Option<String>,
    ) -> anyhow::Result<BuiltModel> {
        let home = resolve_home(self.home.as_deref())?;
        let loaded = load_config(self.config.as_deref(), &home)?;
        let spec = self
            .model
            .clone()
            .or(fallback)
            .unwrap_or_else(|| DEFAULT_MODEL_SPEC.to_owned());
        build(runtime, &spec, &self.model_options(&loaded.model))
    }

    /// The model options: flags first, then the config file's model settings.
    pub(crate) fn model_options(&self, file: &ModelConfig) -> ModelOptions {
        ModelOptions {
            base_url: self.base_url.clone(),
            context_window: self.context_window.or(file.context_window),
            reasoning_effort: self.reasoning_effort.or(file.reasoning_effort),
            request_timeout: self
                .request_timeout
                .or(file.request_timeout_seconds)
                .map(Duration::from_secs),
            max_tries: file
                .request_max_retries
                .map(|retries| retries.saturating_add(1)),
            discover_context_window: true,
            structured_output: file.structured_output,
        }
    }
}

/// Builds the model `spec` names with these options, on `runtime` (a server may be asked for
/// its context window).
pub(crate) fn build(
    runtime: &tokio::runtime::Runtime,
    spec: &str,
    options: &ModelOptions,
) -> anyhow::Result<BuiltModel> {
    let mut options = options.clone();
    // The environment names the server only for an HTTP model: `offline` has none.
    let http = matches!(ModelSpec::parse(spec), Ok(ModelSpec::OpenAi { .. }));
    if options.base_url.is_none() && http {
        options.base_url = std::env::var(BASE_URL_ENV)
            .ok()
            .filter(|url| !url.trim().is_empty());
    }
    Ok(runtime.block_on(build_model(spec, &options, Arc::new(OfflineEngine::new())))?)
}

/// The options for a model the config file named rather than `--model`: `--base-url` is for
/// the HTTP model it was given with, so it is left out for an `offline` spec there (an explicit
/// `--model offline --base-url URL` is still refused).
pub(crate) fn options_for_config_spec(spec: &str, options: &ModelOptions) -> ModelOptions {
    let mut options = options.clone();
    if matches!(ModelSpec::parse(spec), Ok(ModelSpec::Offline)) {
        options.base_url = None;
    }
    options
}

/// The home a command works in: the flag, else `$AGENT_MEMORY_HOME`, else `~/.agent-memory`.
/// It is per user, never the current folder, so running from another folder finds the same
/// memories.
pub(crate) fn resolve_home(flag: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(home) = flag.map(Path::to_path_buf).or_else(|| {
        std::env::var_os(HOME_ENV)
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
    }) {
        return Ok(home);
    }
    match std::env::home_dir().filter(|dir| !dir.as_os_str().is_empty()) {
        Some(user_home) => Ok(user_home.join(DEFAULT_HOME)),
        None => bail!("cannot find your home folder: pass --home DIR or set ${HOME_ENV}"),
    }
}

/// The config file's settings every write-path command reads, and the file itself for the
/// tables only some commands read.
pub(crate) struct LoadedConfig {
    /// The `[memories]` table.
    pub(crate) memories: MemoriesConfig,
    /// The top-level model keys.
    pub(crate) model: ModelConfig,
    /// The `[store]` table, under the environment.
    pub(crate) store: StoreConfig,
    /// The file and the environment.
    pub(crate) config: Config,
}

/// The config file (the flag, else `<home>/config.toml` when present, else defaults) and the
/// environment. Clamping warnings go to stderr.
pub(crate) fn load_config(flag: Option<&Path>, home: &Path) -> anyhow::Result<LoadedConfig> {
    let config = match config_path(flag, home) {
        Some(path) => Config::load(&path)?,
        None => Config::empty(),
    };
    let memories = config.section::<MemoriesConfig>()?;
    for warning in &memories.warnings {
        eprintln!("warning: {warning}");
    }
    Ok(LoadedConfig {
        memories: memories.value,
        model: config.section()?.value,
        store: config.section()?.value,
        config,
    })
}

/// The config file in use: the flag, else `<home>/config.toml` when present.
pub(crate) fn config_path(flag: Option<&Path>, home: &Path) -> Option<PathBuf> {
    let default = home.join(CONFIG_FILE_NAME);
    match flag {
        Some(path) => Some(path.to_path_buf()),
        None => default.is_file().then_some(default),
    }
}

/// A multi-threaded runtime for the async write path.
pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}
