//! `agent-memory migrate`: brings the state store's schema up to this build, and says where
//! each owner's tables stand. Every command migrates on open too; this one lets an operator
//! do it once, ahead of a fleet's workers, and see the versions. A schema written by a newer
//! build is refused with a clear error, never downgraded.

use std::process::ExitCode;

use agent_memory::sanitize::redact_secrets;
use agent_memory::store::names::schema_owners;
use agent_memory::write::store::STATE_FILE_NAME;

use super::exit::{print_json, print_safe};
use super::home::{CommonArgs, load_config, resolve_home, runtime};
use super::store::StoreArgs;

/// Arguments of `agent-memory migrate`.
#[derive(Debug, clap::Args)]
pub(crate) struct MigrateArgs {
    #[command(flatten)]
    common: CommonArgs,
    #[command(flatten)]
    store: StoreArgs,
    /// Print one JSON object instead of a summary.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: MigrateArgs) -> ExitCode {
    match execute(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => super::exit::report_error_as(&error, args.json),
    }
}

fn execute(args: &MigrateArgs) -> anyhow::Result<()> {
    let home = resolve_home(args.common.home.as_deref())?;
    let loaded = load_config(args.common.config.as_deref(), &home)?;
    let runtime = runtime()?;
    let selection = args.store.selection(&loaded.store);
    let store = super::store::open(&runtime, &home, &selection)?;
    let goals = super::goal::open_at(&home, &selection)?;
    let owners = [
        (
            schema_owners::MEMORY_WRITE,
            runtime.block_on(store.schema_version())?,
        ),
        (schema_owners::GOAL_STEERING, goals.schema_version()?),
    ];
    let place = match &selection.url {
        // A password in the URL is not printed.
        Some(url) => format!("{} store {}", store.backend(), redact_secrets(url)),
        None => home.join(STATE_FILE_NAME).display().to_string(),
    };
    if args.json {
        print_json(serde_json::json!({
            "backend": store.backend(),
            "owners": owners
                .iter()
                .map(|(owner, version)| serde_json::json!({"owner": owner, "version": version}))
                .collect::<Vec<_>>(),
        }));
    } else {
        let mut text = format!("{place}: schema up to date\n");
        for (owner, version) in &owners {
            text.push_str(&format!("  {owner}: version {version}\n"));
        }
        print_safe(&text);
    }
    Ok(())
}
