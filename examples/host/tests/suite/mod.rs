mod base_url;
mod compaction_guard;
mod long_session;
mod random_scripts;
mod script_file;
mod seams;
mod untrusted;
mod working_memory;

/// Runs `script` offline with the scripted model, in a home at `home`, reducing the context by
/// `context` at the threshold.
pub(crate) fn run_script(
    script: &reference_host::Script,
    home: &std::path::Path,
    context: reference_host::ContextStrategy,
) -> reference_host::Result<reference_host::HostReport> {
    let options = reference_host::HostOptions {
        context,
        ..reference_host::HostOptions::for_script(script, home)
    };
    let host = reference_host::Host::new(
        options,
        reference_host::ScriptedModel::new(script.replies()),
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread runtime");
    runtime.block_on(host.run_script(script))
}
