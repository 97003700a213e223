mod base_url;
mod compaction_guard;
mod long_session;
mod random_scripts;
mod script_file;
mod seams;
mod untrusted;
mod working_memory;
